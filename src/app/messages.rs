//! Messages shown to the user as dismissible toasts: what happened and how to fix it.

/// How serious a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Something worked (e.g. a file was saved).
    Info,
    /// Something could not be done; the app state is unchanged.
    Error,
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
        let id = self.next_id;
        self.next_id += 1;
        self.items.push(Message { id, level, text: text.into() });
        if self.items.len() > Self::MAX {
            self.items.remove(0);
        }
        id
    }

    /// Adds an error message.
    pub fn error(&mut self, text: impl Into<String>) -> u64 {
        self.push(Level::Error, text)
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
}
