//! Sensed obstacles: a point cloud is folded into a copy of the distance
//! field on a worker thread, swapped in at the start of a later cycle.

use super::*;

/// Sensed obstacles are folded into a copy of the distance field on a
/// worker thread (a rebuild takes longer than a cycle); the finished field
/// is swapped in at the start of a cycle and the old one goes back to the
/// worker for the next cloud.
pub(super) struct Sensing {
    jobs: mpsc::Sender<SenseJob>,
    done: mpsc::Receiver<(DistanceField, PointReport)>,
    busy: bool,
    /// A cloud arrived while the worker was busy: send it when it is free.
    waiting: bool,
    points: Vec<[f32; 3]>,
    spare: Option<DistanceField>,
    pub(super) report: Option<PointReport>,
    pub(super) last_cloud_s: f64,
}

struct SenseJob {
    points: Vec<[f32; 3]>,
    robots: Vec<PosedSpheres>,
    margin_m: f32,
    field: Option<DistanceField>,
}

fn sense_worker(
    mut spare: Option<DistanceField>,
    jobs: mpsc::Receiver<SenseJob>,
    done: mpsc::Sender<(DistanceField, PointReport)>,
) {
    while let Ok(job) = jobs.recv() {
        if let Some(f) = job.field {
            spare = Some(f);
        }
        let Some(mut f) = spare.take() else { continue };
        let robots: Vec<&PosedSpheres> = job.robots.iter().collect();
        let report = f.set_sensed_points(&job.points, &robots, job.margin_m);
        if done.send((f, report)).is_err() {
            return;
        }
    }
}

impl GuardNode {
    /// Takes a point cloud of sensed obstacles (in the cell frame): the
    /// field is rebuilt with them on a worker thread and swapped in at the
    /// start of a later cycle. Points within the release margin of a robot's
    /// own spheres (at its latest joint state) are left out.
    pub fn on_cloud(&mut self, msg: &PointCloud2, now_s: f64) -> Result<(), CloudError> {
        let r = self.take_cloud(msg, now_s);
        self.cloud_error = r.as_ref().err().cloned();
        if r.is_ok() {
            self.guard.note_cloud(now_s);
        }
        r
    }

    pub(super) fn take_cloud(&mut self, msg: &PointCloud2, now_s: f64) -> Result<(), CloudError> {
        if msg.header.frame_id != self.cell.cell_frame {
            return Err(CloudError::Frame { got: msg.header.frame_id.clone(), want: self.cell.cell_frame.clone() });
        }
        if self.sensing.is_none() {
            let (jobs, jobs_rx) = mpsc::channel();
            let (done_tx, done) = mpsc::channel();
            let first = self.guard.field().clone();
            std::thread::Builder::new()
                .name("sensed-field".into())
                .spawn(move || sense_worker(Some(first), jobs_rx, done_tx))
                .map_err(|_| CloudError::MissingField("worker"))?;
            self.sensing = Some(Sensing {
                jobs,
                done,
                busy: false,
                waiting: false,
                points: Vec::new(),
                spare: None,
                report: None,
                last_cloud_s: now_s,
            });
        }
        // invariant: set just above when it was None
        let s = self.sensing.as_mut().expect("set above");
        cloud_points(msg, &mut s.points)?;
        s.last_cloud_s = now_s;
        s.waiting = true;
        self.send_cloud();
        Ok(())
    }

    pub(super) fn send_cloud(&mut self) {
        let margin_m = self.guard.tuning().release_m as f32;
        let Some(s) = self.sensing.as_mut() else { return };
        if s.busy || !s.waiting {
            return;
        }
        let mut robots = Vec::with_capacity(self.io.len());
        for io in &mut self.io {
            if io.has_q && io.poser.pose(&io.q, &mut io.posed).is_ok() {
                robots.push(io.posed.clone());
            }
        }
        let job = SenseJob { points: std::mem::take(&mut s.points), robots, margin_m, field: s.spare.take() };
        if s.jobs.send(job).is_ok() {
            s.busy = true;
            s.waiting = false;
        }
    }

    pub(super) fn take_sensed_field(&mut self) {
        let Some(s) = self.sensing.as_mut() else { return };
        if let Ok((mut f, report)) = s.done.try_recv() {
            std::mem::swap(self.guard.field_mut(), &mut f);
            s.spare = Some(f);
            s.report = Some(report);
            s.busy = false;
            self.send_cloud();
        }
    }

    /// The last cloud folded into the field: what became of its points.
    pub fn sensed_report(&self) -> Option<PointReport> {
        self.sensing.as_ref().and_then(|s| s.report)
    }
}
