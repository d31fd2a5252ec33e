//! Subscribers' callbacks, and handing a sample to those of its route.

use std::sync::Arc;

use crate::api::Sample;

/// A subscriber's callback: it borrows each sample, or takes it
/// ([`Session::declare_subscriber_owned`](super::Session::declare_subscriber_owned)).
#[derive(Clone)]
pub(crate) enum Callback {
    /// Called with a reference to the sample.
    Borrowing(Arc<dyn Fn(&Sample) + Send + Sync>),
    /// Called with a sample of its own: the last callback of a sample gets it without a
    /// clone (see [`deliver`]).
    Taking(Arc<dyn Fn(Sample) + Send + Sync>),
}

impl Callback {
    /// Calls it with `sample`, cloned for a callback that takes its samples.
    pub(crate) fn call(&self, sample: &Sample) {
        match self {
            Self::Borrowing(f) => f(sample),
            Self::Taking(f) => f(sample.clone()),
        }
    }

    /// Calls it with `sample`, which a callback that takes its samples gets as it is.
    pub(crate) fn call_with(&self, sample: Sample) {
        match self {
            Self::Borrowing(f) => f(&sample),
            Self::Taking(f) => f(sample),
        }
    }
}

/// Hands `sample` to each of `callbacks` in order: the last one gets the sample itself,
/// the others a reference or a clone.
pub(crate) fn deliver(callbacks: &[Callback], sample: Sample) {
    if let Some((last, others)) = callbacks.split_last() {
        for callback in others {
            callback.call(&sample);
        }
        last.call_with(sample);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::api::{Payload, SampleKind};

    fn sample() -> Sample {
        Sample {
            key_expr: "a/b".into(),
            kind: SampleKind::Put,
            payload: Payload::from(vec![7u8; 100]),
            encoding: "zenoh/bytes".into(),
            timestamp: None,
            attachment: None,
            priority: Default::default(),
            congestion_control: Default::default(),
            express: false,
            source_info: None,
        }
    }

    /// Callbacks that note where the payload each was given lies.
    fn noting() -> (Arc<Mutex<Vec<usize>>>, Callback, Callback) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (a, b) = (seen.clone(), seen.clone());
        let borrowing = Callback::Borrowing(Arc::new(move |s: &Sample| {
            a.lock().unwrap().push(s.payload.as_ptr() as usize)
        }));
        let taking = Callback::Taking(Arc::new(move |s: Sample| {
            b.lock().unwrap().push(s.payload.as_ptr() as usize)
        }));
        (seen, borrowing, taking)
    }

    #[test]
    fn the_last_callback_gets_the_sample_itself_the_others_a_reference_or_a_clone() {
        let (seen, borrowing, taking) = noting();
        let s = sample();
        let original = s.payload.as_ptr() as usize;
        deliver(&[borrowing.clone(), taking.clone()], s);
        assert_eq!(*seen.lock().unwrap(), [original, original]);

        seen.lock().unwrap().clear();
        let s = sample();
        let original = s.payload.as_ptr() as usize;
        deliver(&[taking, borrowing], s);
        let seen = seen.lock().unwrap();
        assert_ne!(
            seen[0], original,
            "a callback before the last takes a clone"
        );
        assert_eq!(seen[1], original);
    }

    #[test]
    fn no_callback_no_call() {
        deliver(&[], sample());
    }
}
