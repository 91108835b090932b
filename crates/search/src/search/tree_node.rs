//! One node of a search tree as the CLI and the panel show it (the explicit search's or a model's), shared
//! by internal search and the aligned view of its two trees.

/// One node of a search tree as the CLI and the panel show it (the explicit search's or a model's).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TreeNode {
    /// The moves from the root (UCI), empty at the root.
    pub path: Vec<String>,
    /// The move from the parent (UCI).
    pub action: Option<String>,
    /// The parent's model value of this move under max scoring, for the parent's player to move. In a
    /// model-written trace the move has one written bucket: its centre, as both max and mean.
    pub move_max: Option<f64>,
    /// The same under mean scoring.
    pub move_mean: Option<f64>,
    /// The backed-up value for the player to move here (a win probability).
    pub value: Option<f64>,
    /// The move chosen here (UCI).
    pub choice: Option<String>,
    /// Whether the node is on the line chosen from the root.
    pub on_chosen_line: bool,
    /// A terminal result or why the node failed.
    pub note: Option<String>,
    /// What is wrong at this node (model-written traces only).
    pub issues: Vec<String>,
    /// Expanded children in expansion order.
    pub children: Vec<TreeNode>,
}

impl TreeNode {
    /// Nodes in the subtree (this one included).
    pub fn count(&self) -> usize {
        1 + self.children.iter().map(TreeNode::count).sum::<usize>()
    }

    /// The child reached by `action`.
    pub fn child(&self, action: &str) -> Option<&TreeNode> {
        self.children.iter().find(|c| c.action.as_deref() == Some(action))
    }

    /// The chosen line from this node: each node's choice while it leads to an expanded child, then the
    /// last node's choice.
    pub fn chosen_line(&self) -> Vec<String> {
        let mut line = Vec::new();
        let mut node = self;
        while let Some(c) = &node.choice {
            line.push(c.clone());
            match node.child(c) {
                Some(next) => node = next,
                None => break,
            }
        }
        line
    }

    /// The node name of the trace format (`<root>`, `<root e2e4 e7e5>`).
    pub fn name(&self) -> String {
        crate::mav::trace::node_name(&self.path)
    }

    /// Marks this node and the chosen line below it as on the chosen line.
    pub fn mark_chosen_line(&mut self) {
        self.on_chosen_line = true;
        let Some(c) = self.choice.clone() else { return };
        if let Some(next) = self.children.iter_mut().find(|n| n.action.as_deref() == Some(c.as_str())) {
            next.mark_chosen_line();
        }
    }
}
