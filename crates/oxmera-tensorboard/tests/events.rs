//! Files written by [`SummaryWriter`] read back value for value, a resumed
//! run adds a file beside the first, and a file cut as a kill would cut it
//! still yields every event written before the cut.

use oxmera_tensorboard::SummaryWriter;
use oxmera_tensorboard::record::{ScalarPoint, read_events};

#[test]
fn scalars_read_back_in_order_with_their_steps() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = SummaryWriter::create(dir.path()).unwrap();
    for step in 0..5u64 {
        w.add_scalars(&[("loss", 1.0 / (step + 1) as f64), ("lr", 0.1)], step)
            .unwrap();
    }
    let events = read_events(w.path()).unwrap();
    assert_eq!(events.records, 6);
    assert!(events.torn_tail.is_none());
    let losses: Vec<&ScalarPoint> = events.scalars.iter().filter(|p| p.tag == "loss").collect();
    assert_eq!(losses.len(), 5);
    assert_eq!((losses[3].step, losses[3].value), (3, 0.25));
}

#[test]
fn a_resumed_run_writes_a_second_file_and_keeps_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let mut w = SummaryWriter::create(dir.path()).unwrap();
        w.add_scalar("loss", 1.0, 10).unwrap();
        w.path().to_path_buf()
    };
    let mut second = SummaryWriter::create(dir.path()).unwrap();
    second.add_scalar("loss", 0.5, 11).unwrap();
    assert_ne!(first, second.path());
    let names = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(names, 2);
    assert_eq!(read_events(&first).unwrap().scalars[0].step, 10);
}

#[test]
fn a_kill_mid_write_leaves_every_earlier_event_readable() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = SummaryWriter::create(dir.path()).unwrap();
    for step in 0..4u64 {
        w.add_scalar("loss", step as f64, step).unwrap();
    }
    let path = w.path().to_path_buf();
    drop(w);
    let whole = std::fs::read(&path).unwrap();
    // Cut inside the last record, as a kill during its write would.
    std::fs::write(&path, &whole[..whole.len() - 7]).unwrap();
    let events = read_events(&path).unwrap();
    assert_eq!(events.records, 4); // the version event and steps 0, 1, 2
    assert_eq!(events.scalars.last().unwrap().step, 2);
    assert!(events.torn_tail.unwrap().contains("cut short"));
}
