//! Which arms, and which pairs of arms, a check covers (a cycle split in
//! two halves checks each apart).

/// Which arms, and which pairs of arms, a check covers.
#[derive(Clone, Copy, Debug)]
pub(super) enum Part {
    All,
    /// This arm, and the pairs that include it.
    Only(usize),
    /// The other arms, and the pairs without this one.
    Except(usize),
}

impl Part {
    pub(super) fn arm(self, r: usize) -> bool {
        match self {
            Part::All => true,
            Part::Only(x) => r == x,
            Part::Except(x) => r != x,
        }
    }

    pub(super) fn pair(self, a: usize, b: usize) -> bool {
        match self {
            Part::All => true,
            Part::Only(x) => a == x || b == x,
            Part::Except(x) => a != x && b != x,
        }
    }
}
