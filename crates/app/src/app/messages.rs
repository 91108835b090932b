//! Messages shown to the user as dismissible toasts: what happened and how to fix it.

/// How serious a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something worked (e.g. a file was saved).
    Info,
    /// Something could not be done; the app state is unchanged.
    Error,
}

/// What an error is about, so that it goes away by itself once that is fixed (see [`Messages::resolve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// The model: it could not be loaded, or none is loaded. Resolved when a model is ready.
    Model,
    /// The engine's evaluations failed (a model error, a model server gone). Resolved when evaluations arrive
    /// again.
    Evaluation,
}

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Identifies the message for dismissal.
    pub id: u64,
    /// Info or error.
    pub level: Level,
    /// What happened.
    pub text: String,
    /// What it is about, when it should go once that is fixed.
    pub topic: Option<Topic>,
}

/// The open messages, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Messages {
    items: Vec<Message>,
    next_id: u64,
}

impl Messages {
    /// Most messages kept at once; older ones are dropped.
    pub const MAX: usize = 5;

    /// Adds a message and returns its id.
    pub fn push(&mut self, level: Level, text: impl Into<String>) -> u64 {
        self.push_about(level, None, text)
    }

    fn push_about(&mut self, level: Level, topic: Option<Topic>, text: impl Into<String>) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let text = text.into();
        // The same error about the same thing again replaces the old one instead of stacking up.
        self.items.retain(|m| !(topic.is_some() && m.topic == topic && m.text == text));
        self.items.push(Message { id, level, text, topic });
        if self.items.len() > Self::MAX {
            self.items.remove(0);
        }
        id
    }

    /// Adds an error message.
    pub fn error(&mut self, text: impl Into<String>) -> u64 {
        self.push(Level::Error, text)
    }

    /// Adds an error message about `topic`, removed by [`Self::resolve`] once that is fixed.
    pub fn error_about(&mut self, topic: Topic, text: impl Into<String>) -> u64 {
        self.push_about(Level::Error, Some(topic), text)
    }

    /// Removes the messages about `topic`: what they reported is fixed (a model loaded, evaluations arrive).
    pub fn resolve(&mut self, topic: Topic) {
        self.items.retain(|m| m.topic != Some(topic));
    }

    /// Adds an info message.
    pub fn info(&mut self, text: impl Into<String>) -> u64 {
        self.push(Level::Info, text)
    }

    /// Removes the message with this id (no-op if it is gone).
    pub fn dismiss(&mut self, id: u64) {
        self.items.retain(|m| m.id != id);
    }

    /// The open messages.
    pub fn items(&self) -> &[Message] {
        &self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_dismiss_and_bound() {
        let mut m = Messages::default();
        let a = m.error("a");
        let b = m.info("b");
        m.dismiss(a);
        assert_eq!(m.items().len(), 1);
        assert_eq!(m.items()[0].id, b);
        for i in 0..10 {
            m.error(format!("{i}"));
        }
        assert_eq!(m.items().len(), Messages::MAX);
        assert_eq!(m.items().last().map(|x| x.text.as_str()), Some("9"));
    }

    #[test]
    fn errors_about_a_topic_go_when_it_is_resolved_and_do_not_stack() {
        let mut m = Messages::default();
        let other = m.error("the file could not be read");
        m.error_about(Topic::Model, "no model");
        m.error_about(Topic::Evaluation, "connection refused");
        m.error_about(Topic::Evaluation, "connection refused");
        assert_eq!(m.items().len(), 3, "the repeated error replaced the first");
        m.resolve(Topic::Evaluation);
        assert_eq!(
            m.items().iter().map(|x| x.text.as_str()).collect::<Vec<_>>(),
            ["the file could not be read", "no model"]
        );
        m.resolve(Topic::Model);
        assert_eq!(m.items().len(), 1);
        assert_eq!(m.items()[0].id, other, "errors without a topic stay until dismissed");
    }
}
