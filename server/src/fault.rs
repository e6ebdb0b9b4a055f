//! Test-only fault knobs: an environment variable naming one step of a multi-step write (a lake
//! commit, a bucket's remote tiering round) makes the server process abort there, so the
//! crash-safety tests can kill it between any two steps (RELIABILITY.md, crash safety). Unset or
//! empty, a knob is inert; a value that names no step is refused when the server starts.

use std::sync::OnceLock;

/// One knob: its variable, what its steps belong to, and the steps in their order.
pub struct FaultKnob {
    env: &'static str,
    what: &'static str,
    steps: &'static [&'static str],
    /// The variable as read once: the step named (None: inert), or the value naming none.
    step: OnceLock<Result<Option<&'static str>, String>>,
}

impl FaultKnob {
    /// A knob read from `env` whose `steps` are steps of `what` (e.g. "lake commit").
    pub const fn new(
        env: &'static str,
        what: &'static str,
        steps: &'static [&'static str],
    ) -> Self {
        FaultKnob {
            env,
            what,
            steps,
            step: OnceLock::new(),
        }
    }

    /// The variable's name.
    pub fn env(&self) -> &'static str {
        self.env
    }

    /// The steps, in their order.
    pub fn steps(&self) -> &'static [&'static str] {
        self.steps
    }

    fn read(&self) -> &Result<Option<&'static str>, String> {
        self.step.get_or_init(|| match std::env::var(self.env) {
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(v)) => Err(format!("{v:?}")),
            Ok(v) if v.trim().is_empty() => Ok(None),
            Ok(v) => self
                .steps
                .iter()
                .find(|s| **s == v.trim())
                .map(|s| Some(*s))
                .ok_or(v),
        })
    }

    /// The step the variable names (None: no fault), or an error naming a value that is no step.
    pub fn step(&self) -> riverlet::Result<Option<&'static str>> {
        self.read().clone().map_err(|v| {
            riverlet::Error::invalid(format!(
                "{}={v}: not a {} step (one of {})",
                self.env,
                self.what,
                self.steps.join(", ")
            ))
        })
    }

    /// Aborts the process (after one stderr line naming the step) when the variable names `step`.
    pub fn point(&self, step: &'static str) {
        debug_assert!(
            self.steps.contains(&step),
            "{step} is no step of {}",
            self.env
        );
        if let Ok(Some(s)) = self.read() {
            if *s == step {
                eprintln!(
                    "{}: aborting the process at {} step {step}",
                    self.env, self.what
                );
                std::process::abort();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Each test reads a variable of its own: a knob reads its variable once.
    #[test]
    fn a_value_that_names_no_step_is_refused_by_name() {
        static KNOB: FaultKnob = FaultKnob::new("RIVERLET_TEST_KNOB_BAD", "test", &["a", "b"]);
        std::env::set_var(KNOB.env(), "c");
        let e = KNOB.step().unwrap_err().to_string();
        assert!(
            e.contains("RIVERLET_TEST_KNOB_BAD=c") && e.contains("a, b"),
            "{e}"
        );
        KNOB.point("a"); // inert: the value names no step
    }

    #[test]
    fn unset_or_empty_is_inert_and_a_step_is_named() {
        static UNSET: FaultKnob = FaultKnob::new("RIVERLET_TEST_KNOB_UNSET", "test", &["a"]);
        assert_eq!(UNSET.step().unwrap(), None);
        static EMPTY: FaultKnob = FaultKnob::new("RIVERLET_TEST_KNOB_EMPTY", "test", &["a"]);
        std::env::set_var(EMPTY.env(), " ");
        assert_eq!(EMPTY.step().unwrap(), None);
        static SET: FaultKnob = FaultKnob::new("RIVERLET_TEST_KNOB_SET", "test", &["a", "b"]);
        std::env::set_var(SET.env(), " b ");
        assert_eq!(SET.step().unwrap(), Some("b"));
        SET.point("a"); // another step: goes on
    }
}
