//! A map of at most a fixed number of entries that forgets the oldest stored first (first in, first out;
//! storing a kept key again replaces its value without making it newer). The caches and stores that must not
//! grow without end over hours of use are built on it: the engine's result cache, the evaluation graph's
//! values.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// Up to `capacity` values by key, the oldest stored forgotten first.
#[derive(Debug, Clone)]
pub struct BoundedMap<K, V> {
    capacity: usize,
    map: HashMap<K, V>,
    /// Keys in the order they were first stored (each kept key once).
    order: VecDeque<K>,
}

impl<K: Eq + Hash + Clone, V> BoundedMap<K, V> {
    /// An empty map of at most `capacity` entries (0 keeps nothing).
    pub fn new(capacity: usize) -> Self {
        BoundedMap { capacity, map: HashMap::new(), order: VecDeque::new() }
    }

    /// Stores `value` for `key` (replacing an older one), forgetting the oldest entries beyond the capacity.
    pub fn insert(&mut self, key: K, value: V) {
        if self.capacity == 0 {
            return;
        }
        match self.map.get_mut(&key) {
            Some(slot) => *slot = value,
            None => {
                self.order.push_back(key.clone());
                self.map.insert(key, value);
            }
        }
        while self.map.len() > self.capacity {
            match self.order.pop_front() {
                Some(old) => {
                    self.map.remove(&old);
                }
                None => break,
            }
        }
    }

    /// The value kept for `key`.
    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        self.map.get(key)
    }

    /// Entries kept.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Forgets every entry.
    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgets_the_oldest_first_and_replacing_does_not_make_room() {
        let mut m = BoundedMap::new(3);
        for (i, k) in ["a", "b", "c"].iter().enumerate() {
            m.insert((*k).to_owned(), i);
        }
        m.insert("a".to_owned(), 10);
        assert_eq!((m.len(), m.get("a")), (3, Some(&10)));
        m.insert("d".to_owned(), 3);
        // "a" was stored first: replacing its value did not make it newer.
        assert_eq!(m.get("a"), None);
        assert_eq!((m.get("b"), m.get("d"), m.len()), (Some(&1), Some(&3), 3));
        m.clear();
        assert!(m.is_empty());
        m.insert("e".to_owned(), 4);
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn capacity_zero_keeps_nothing_and_memory_stays_bounded() {
        let mut none = BoundedMap::new(0);
        none.insert(1u64, ());
        assert!(none.is_empty());
        let mut m = BoundedMap::new(100);
        for i in 0..10_000u64 {
            m.insert(i, i);
        }
        assert_eq!(m.len(), 100);
        assert_eq!(m.order.len(), 100, "the order holds each kept key once");
        assert_eq!(m.get(&9_900), Some(&9_900));
        assert_eq!(m.get(&9_899), None);
    }
}
