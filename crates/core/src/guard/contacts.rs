//! Allowed contacts: link pairs, and link–obstacle pairs, the checks skip;
//! set and broken at run time.

use super::*;

impl Guard {
    pub(super) fn link_global(&self, b: BodyRef) -> Result<Option<usize>, ContactError> {
        match b {
            BodyRef::Link { robot, link } => {
                let arm = self.arms.get(robot).ok_or(ContactError::UnknownBody(b))?;
                if link >= arm.model.n_links {
                    return Err(ContactError::UnknownBody(b));
                }
                Ok(Some(self.matrix.global(robot, link)))
            }
            BodyRef::Obstacle(i) if i < self.cell.obstacles.len() => Ok(None),
            BodyRef::Obstacle(_) => Err(ContactError::UnknownBody(b)),
            BodyRef::PlatenUnit(_) => Err(ContactError::PlatenUnit),
        }
    }

    pub(super) fn set_contact(&mut self, a: BodyRef, b: BodyRef, on: bool) -> Result<(), ContactError> {
        if a == b {
            return Err(ContactError::SameBody);
        }
        let (ga, gb) = (self.link_global(a)?, self.link_global(b)?);
        let n = self.matrix.total_links();
        let set = |words: &mut [u64], bit: usize| {
            if on {
                words[bit / 64] |= 1 << (bit % 64);
            } else {
                words[bit / 64] &= !(1 << (bit % 64));
            }
        };
        match (ga, gb, a, b) {
            (Some(x), Some(y), _, _) => {
                set(&mut self.allowed, x * n + y);
                set(&mut self.allowed, y * n + x);
            }
            (Some(x), None, _, BodyRef::Obstacle(o)) | (None, Some(x), BodyRef::Obstacle(o), _) => {
                let w = self.cell.obstacle_words;
                set(&mut self.cell.allowed_obstacles[x * w..(x + 1) * w], o);
            }
            _ => return Err(ContactError::NoLink),
        }
        Ok(())
    }

    /// Lets two bodies touch (e.g. a gripper and its workpiece) until
    /// [`forbid_contact`](Self::forbid_contact).
    pub fn allow_contact(&mut self, a: BodyRef, b: BodyRef) -> Result<(), ContactError> {
        self.dirty_fixed();
        self.set_contact(a, b, true)
    }

    /// Breaks an allowed contact.
    pub fn forbid_contact(&mut self, a: BodyRef, b: BodyRef) -> Result<(), ContactError> {
        self.dirty_fixed();
        self.set_contact(a, b, false)
    }

    /// True when the two bodies may touch.
    pub fn contact_allowed(&self, a: BodyRef, b: BodyRef) -> Result<bool, ContactError> {
        let (ga, gb) = (self.link_global(a)?, self.link_global(b)?);
        let n = self.matrix.total_links();
        let bit = |words: &[u64], i: usize| words[i / 64] >> (i % 64) & 1 == 1;
        Ok(match (ga, gb, a, b) {
            (Some(x), Some(y), _, _) => bit(&self.allowed, x * n + y),
            (Some(x), None, _, BodyRef::Obstacle(o)) | (None, Some(x), BodyRef::Obstacle(o), _) => {
                bit(&self.cell.allowed_obstacles[x * self.cell.obstacle_words..], o)
            }
            _ => return Err(ContactError::NoLink),
        })
    }
}
