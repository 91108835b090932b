//! The model's trace tree and the explicit minimax tree aligned node by node (the *Internal search*
//! panel's comparison): one row per node either tree has, in the explicit search's order with the model's
//! extra children after, each side's backed-up value and choice, and a mark where they part: a child only
//! one side expanded, a leaf valued differently (by more than one bucket), a value the model backed up
//! inconsistently, a different choice.

use super::tree_node::TreeNode;

/// One side's view of a node.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Side {
    /// The backed-up value for the side to move at the node.
    pub value: Option<f64>,
    /// The move chosen there.
    pub choice: Option<String>,
    /// On this side's chosen line from the root.
    pub on_chosen_line: bool,
}

impl Side {
    fn of(n: &TreeNode) -> Side {
        Side { value: n.value, choice: n.choice.clone(), on_chosen_line: n.on_chosen_line }
    }
}

/// Where the two trees part at a node.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mark {
    /// The explicit search expanded this node and the model did not.
    OnlyExplicit,
    /// The model expanded this node and the explicit search did not.
    OnlyModel,
    /// Both valued this leaf, the model by `model − explicit` away (more than one bucket's width).
    LeafValue {
        /// The model's value less the search's, for the side to move at the leaf.
        delta: f64,
    },
    /// The model backed a value up inconsistently here.
    Backup {
        /// Its own trace's issue, as written.
        issue: String,
    },
    /// The two choose different moves here.
    Choice {
        /// The search's choice.
        explicit: Option<String>,
        /// The model's.
        model: Option<String>,
    },
}

impl Mark {
    /// A short tag for a narrow column: `search only`, `model only`, `leaf +10.0`, `backup`, `choice`.
    pub fn tag(&self) -> String {
        match self {
            Mark::OnlyExplicit => "search only".to_owned(),
            Mark::OnlyModel => "model only".to_owned(),
            Mark::LeafValue { delta } => format!("leaf {:+.1}", 100.0 * delta),
            Mark::Backup { .. } => "backup".to_owned(),
            Mark::Choice { .. } => "choice".to_owned(),
        }
    }

    /// The mark in words, for the panel and the CLI.
    pub fn describe(&self) -> String {
        match self {
            Mark::OnlyExplicit => "only the search expanded it".to_owned(),
            Mark::OnlyModel => "only the model expanded it".to_owned(),
            Mark::LeafValue { delta } => format!("the model values it {:+.1} points apart", 100.0 * delta),
            Mark::Backup { issue } => format!("inconsistent backup: {issue}"),
            Mark::Choice { explicit, model } => format!(
                "the search chooses {}, the model {}",
                explicit.as_deref().unwrap_or("nothing"),
                model.as_deref().unwrap_or("nothing")
            ),
        }
    }
}

/// A node of the aligned tree.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AlignedNode {
    /// The moves from the root.
    pub path: Vec<String>,
    /// The explicit search's view, when it has the node.
    pub explicit: Option<Side>,
    /// The model's view, when its trace has the node.
    pub model: Option<Side>,
    /// Where the two part here.
    pub marks: Vec<Mark>,
    /// The children: the search's in its order, then the model's others in its order.
    pub children: Vec<AlignedNode>,
}

impl AlignedNode {
    /// The node's move (`None` at the root).
    pub fn action(&self) -> Option<&str> {
        self.path.last().map(String::as_str)
    }

    /// The nodes depth-first (the root first), with their depth.
    pub fn rows(&self) -> Vec<(usize, &AlignedNode)> {
        let mut out = Vec::new();
        self.rows_into(0, &mut out);
        out
    }

    fn rows_into<'a>(&'a self, depth: usize, out: &mut Vec<(usize, &'a AlignedNode)>) {
        out.push((depth, self));
        for c in &self.children {
            c.rows_into(depth + 1, out);
        }
    }

    /// Marks in the whole tree.
    pub fn mark_count(&self) -> usize {
        self.marks.len() + self.children.iter().map(AlignedNode::mark_count).sum::<usize>()
    }
}

/// Aligns `explicit` and `model` (both rooted at the same position); `buckets` is the model's K (a leaf's
/// values differ when they are more than 1/K apart: the model writes bucket centres, the search exact values).
pub fn align(explicit: &TreeNode, model: &TreeNode, buckets: u32) -> AlignedNode {
    node(Some(explicit), Some(model), explicit.path.clone(), 1.0 / f64::from(buckets.max(1)))
}

fn node(e: Option<&TreeNode>, m: Option<&TreeNode>, path: Vec<String>, width: f64) -> AlignedNode {
    let mut marks = Vec::new();
    match (e, m) {
        (Some(_), None) => marks.push(Mark::OnlyExplicit),
        (None, Some(_)) => marks.push(Mark::OnlyModel),
        _ => {}
    }
    if let (Some(e), Some(m)) = (e, m) {
        if e.children.is_empty()
            && m.children.is_empty()
            && let (Some(ev), Some(mv)) = (e.value, m.value)
            && (mv - ev).abs() > width
        {
            marks.push(Mark::LeafValue { delta: mv - ev });
        }
        if (!e.children.is_empty() || !m.children.is_empty()) && e.choice != m.choice {
            marks.push(Mark::Choice { explicit: e.choice.clone(), model: m.choice.clone() });
        }
    }
    if let Some(m) = m {
        for issue in m.issues.iter().filter(|i| i.contains("inconsistent backed-up value")) {
            marks.push(Mark::Backup { issue: issue.clone() });
        }
    }
    let mut children = Vec::new();
    let empty: &[TreeNode] = &[];
    let (ek, mk) = (e.map_or(empty, |n| &n.children[..]), m.map_or(empty, |n| &n.children[..]));
    for c in ek {
        let other = c.action.as_deref().and_then(|a| mk.iter().find(|k| k.action.as_deref() == Some(a)));
        children.push(node(Some(c), other, c.path.clone(), width));
    }
    for c in mk {
        let seen = c.action.as_deref().is_some_and(|a| ek.iter().any(|k| k.action.as_deref() == Some(a)));
        if !seen {
            children.push(node(None, Some(c), c.path.clone(), width));
        }
    }
    AlignedNode { path, explicit: e.map(Side::of), model: m.map(Side::of), marks, children }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(path: &[&str], value: f64) -> TreeNode {
        TreeNode {
            path: path.iter().map(|s| (*s).to_owned()).collect(),
            action: path.last().map(|s| (*s).to_owned()),
            move_max: None,
            move_mean: None,
            value: Some(value),
            choice: None,
            on_chosen_line: false,
            note: None,
            issues: Vec::new(),
            children: Vec::new(),
        }
    }

    fn inner(choice: &str, value: f64, children: Vec<TreeNode>) -> TreeNode {
        TreeNode { choice: Some(choice.to_owned()), children, ..leaf(&[], value) }
    }

    #[test]
    fn every_mark_serializes_with_its_kind() {
        let marks = [
            Mark::OnlyExplicit,
            Mark::OnlyModel,
            Mark::LeafValue { delta: 0.25 },
            Mark::Backup { issue: "max of children".into() },
            Mark::Choice { explicit: Some("e2e4".into()), model: None },
        ];
        let kinds: Vec<String> = marks
            .iter()
            .map(|m| serde_json::to_value(m).expect("serializes")["kind"].as_str().unwrap_or("").to_owned())
            .collect();
        assert_eq!(kinds, ["only_explicit", "only_model", "leaf_value", "backup", "choice"]);
        let backup = serde_json::to_value(&marks[3]).expect("serializes");
        assert_eq!(backup["issue"], "max of children");
    }

    #[test]
    fn the_same_tree_has_no_mark() {
        let t = inner("e2e4", 0.6, vec![leaf(&["e2e4"], 0.4), leaf(&["d2d4"], 0.45)]);
        let a = align(&t, &t, 64);
        assert_eq!(a.mark_count(), 0);
        assert_eq!(a.rows().len(), 3);
        assert!(a.children.iter().all(|c| c.explicit.is_some() && c.model.is_some()));
    }

    #[test]
    fn different_children_values_choices_and_backups_are_marked() {
        let e = inner("e2e4", 0.6, vec![leaf(&["e2e4"], 0.4), leaf(&["d2d4"], 0.45)]);
        let mut bad = leaf(&["g1f3"], 0.2);
        bad.issues.push("line 9: inconsistent backed-up value for g8f6: wrote <ctrl3>, …".to_owned());
        let mut m = inner("g1f3", 0.8, vec![leaf(&["e2e4"], 0.41), bad]);
        m.issues.push("line 12: inconsistent backed-up value for g1f3: wrote <ctrl50>, …".to_owned());
        let a = align(&e, &m, 64);
        // Root: a different choice and the model's own inconsistent backup.
        assert!(a.marks.iter().any(|k| matches!(k, Mark::Choice { .. })), "{:?}", a.marks);
        assert!(a.marks.iter().any(|k| matches!(k, Mark::Backup { .. })), "{:?}", a.marks);
        // Children: e2e4 in both within a bucket (0.01 < 1/64), d2d4 the search's only, g1f3 the model's.
        let kids: Vec<(&str, &Vec<Mark>)> =
            a.children.iter().map(|c| (c.action().expect("a move"), &c.marks)).collect();
        assert_eq!(kids[0], ("e2e4", &Vec::new()));
        assert_eq!(kids[1], ("d2d4", &vec![Mark::OnlyExplicit]));
        assert_eq!(kids[2].0, "g1f3");
        assert!(
            kids[2].1.contains(&Mark::OnlyModel)
                && kids[2].1.iter().any(|k| matches!(k, Mark::Backup { .. }))
        );
        // A leaf valued further apart than a bucket.
        let m2 = inner("e2e4", 0.6, vec![leaf(&["e2e4"], 0.5), leaf(&["d2d4"], 0.45)]);
        let a2 = align(&e, &m2, 64);
        match a2.children[0].marks.as_slice() {
            [Mark::LeafValue { delta }] => assert!((delta - 0.1).abs() < 1e-9, "{delta}"),
            other => panic!("{other:?}"),
        }
        assert!(a2.children[0].marks[0].describe().contains("+10.0 points"));
        assert_eq!(a2.children[0].marks[0].tag(), "leaf +10.0");
    }
}
