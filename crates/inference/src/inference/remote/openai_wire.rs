//! The OpenAI-compatible completions API as mavboard speaks it: the request (a prompt of token ids, greedy,
//! `logprobs` asked per position) and the two shapes of log-probabilities engines answer with — the
//! `content` list with token ids (llama.cpp's server) and the legacy `tokens` / `top_logprobs` maps (the
//! OpenAI completions API, vLLM; with `return_tokens_as_token_ids` their keys are `token_id:N`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// A greedy completion request.
#[derive(Debug, Serialize)]
pub struct CompletionRequest<'a> {
    /// The model's name on the server.
    pub model: &'a str,
    /// The prompt as token ids (no text: the server's own tokenization never runs).
    pub prompt: &'a [u32],
    /// The most tokens to write.
    pub max_tokens: usize,
    /// 0: greedy.
    pub temperature: f32,
    /// How many log-probabilities to list at each written position.
    pub logprobs: usize,
    /// vLLM: name tokens `token_id:N` rather than by their text (other engines ignore it).
    pub return_tokens_as_token_ids: bool,
    /// One answer, not streamed.
    pub stream: bool,
}

/// One position of a completion: the token the server wrote there and the log-probabilities it listed.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenToken {
    /// The token written.
    pub token: u32,
    /// `(token, log-probability)` of the listed tokens, the most likely first as the server sent them.
    pub top: Vec<(u32, f32)>,
}

/// A completion as read.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionAnswer {
    /// The tokens written, in order.
    pub tokens: Vec<WrittenToken>,
    /// The server's `finish_reason` (`stop`, `length`), when it gave one.
    pub finish_reason: Option<String>,
}

/// Why an answer could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    /// The answer has no log-probabilities.
    #[error("no log-probabilities")]
    NoLogprobs,
    /// The answer is not a completion (bad JSON, no choice, a token that names no id).
    #[error("{0}")]
    Malformed(String),
}

#[derive(Deserialize)]
struct Response {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    logprobs: Option<Logprobs>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Logprobs {
    /// llama.cpp's server (and the chat API's shape): one entry per token, with ids.
    Content { content: Vec<ContentToken> },
    /// The legacy completions shape (OpenAI, vLLM).
    Legacy { tokens: Vec<String>, top_logprobs: Vec<Option<HashMap<String, f64>>> },
}

#[derive(Deserialize)]
struct ContentToken {
    #[serde(default)]
    id: Option<i64>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    top_logprobs: Vec<Alternative>,
}

#[derive(Deserialize)]
struct Alternative {
    #[serde(default)]
    id: Option<i64>,
    #[serde(default)]
    token: Option<String>,
    logprob: f64,
}

/// The id a token's name stands for: `token_id:N`, else the text of one token of the vocabulary.
fn name_to_id(name: &str, piece_id: &dyn Fn(&str) -> Option<u32>) -> Result<u32, WireError> {
    if let Some(n) = name.strip_prefix("token_id:") {
        return n.parse().map_err(|_| WireError::Malformed(format!("{name:?} is not a token id")));
    }
    piece_id(name).ok_or_else(|| {
        WireError::Malformed(format!(
            "the token {name:?} is no token of the package's vocabulary (vLLM: the request asks for \
             return_tokens_as_token_ids)"
        ))
    })
}

fn to_id(
    id: Option<i64>,
    name: Option<&str>,
    piece_id: &dyn Fn(&str) -> Option<u32>,
) -> Result<u32, WireError> {
    match (id, name) {
        (Some(id), _) => u32::try_from(id).map_err(|_| WireError::Malformed(format!("token id {id}"))),
        (None, Some(name)) => name_to_id(name, piece_id),
        (None, None) => Err(WireError::Malformed("a token without an id or a name".into())),
    }
}

/// Log-probabilities as f32, the lowest finite value for an impossible token (engines write it for −∞).
fn logprob(x: f64) -> Result<f32, WireError> {
    if x.is_nan() {
        return Err(WireError::Malformed("a log-probability is NaN".into()));
    }
    Ok(x as f32)
}

/// Reads a completion answer; `piece_id` maps a token's text to its id where the server names tokens by
/// their text.
pub fn read_completion(
    body: &[u8],
    piece_id: &dyn Fn(&str) -> Option<u32>,
) -> Result<CompletionAnswer, WireError> {
    let response: Response =
        serde_json::from_slice(body).map_err(|e| WireError::Malformed(format!("not a completion: {e}")))?;
    let Some(choice) = response.choices.into_iter().next() else {
        return Err(WireError::Malformed("no choice in the answer".into()));
    };
    let tokens = match choice.logprobs {
        None => return Err(WireError::NoLogprobs),
        Some(Logprobs::Content { content }) => {
            let mut out = Vec::with_capacity(content.len());
            for c in content {
                let token = to_id(c.id, c.token.as_deref(), piece_id)?;
                let mut top = Vec::with_capacity(c.top_logprobs.len());
                for a in c.top_logprobs {
                    top.push((to_id(a.id, a.token.as_deref(), piece_id)?, logprob(a.logprob)?));
                }
                out.push(WrittenToken { token, top });
            }
            out
        }
        Some(Logprobs::Legacy { tokens, top_logprobs }) => {
            if tokens.len() != top_logprobs.len() {
                return Err(WireError::Malformed(format!(
                    "{} tokens but {} lists of log-probabilities",
                    tokens.len(),
                    top_logprobs.len()
                )));
            }
            let mut out = Vec::with_capacity(tokens.len());
            for (name, top) in tokens.iter().zip(top_logprobs) {
                let token = name_to_id(name, piece_id)?;
                let mut listed = Vec::new();
                for (k, lp) in top.unwrap_or_default() {
                    listed.push((name_to_id(&k, piece_id)?, logprob(lp)?));
                }
                listed.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                out.push(WrittenToken { token, top: listed });
            }
            out
        }
    };
    Ok(CompletionAnswer { tokens, finish_reason: choice.finish_reason })
}

/// `GET v1/models`: the served models' names, and the context the first one that is `model` states
/// (llama.cpp: `meta.n_ctx`; vLLM: `max_model_len`).
pub fn read_models(body: &[u8], model: &str) -> Result<(Vec<String>, Option<usize>), WireError> {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(default)]
        n_ctx: Option<usize>,
    }
    #[derive(Deserialize)]
    struct Entry {
        id: String,
        #[serde(default)]
        aliases: Vec<String>,
        #[serde(default)]
        meta: Option<Meta>,
        #[serde(default)]
        max_model_len: Option<usize>,
    }
    #[derive(Deserialize)]
    struct List {
        data: Vec<Entry>,
    }
    let list: List =
        serde_json::from_slice(body).map_err(|e| WireError::Malformed(format!("not a model list: {e}")))?;
    let mut names = Vec::new();
    let mut context = None;
    for e in list.data {
        let is = e.id == model || e.aliases.iter().any(|a| a == model);
        if is && context.is_none() {
            context = e.meta.and_then(|m| m.n_ctx).or(e.max_model_len);
        }
        if is {
            names.insert(0, model.to_owned());
        } else {
            names.push(e.id);
        }
    }
    Ok((names, context))
}

/// `POST detokenize`: the text (llama.cpp: `content`; vLLM: `prompt`).
pub fn read_detokenized(body: &[u8]) -> Result<String, WireError> {
    #[derive(Deserialize)]
    struct Text {
        #[serde(default)]
        content: Option<String>,
        #[serde(default)]
        prompt: Option<String>,
    }
    let t: Text = serde_json::from_slice(body)
        .map_err(|e| WireError::Malformed(format!("not a detokenize answer: {e}")))?;
    t.content.or(t.prompt).ok_or_else(|| WireError::Malformed("no text in the detokenize answer".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(s: &str) -> Option<u32> {
        ["<pad>", "e2e4", "d2d4", "<ctrl3>"].iter().position(|p| *p == s).map(|i| i as u32)
    }

    #[test]
    fn reads_llama_cpp_content() {
        let body = br#"{"choices":[{"text":"e2e4","index":0,"finish_reason":"length","logprobs":{"content":[
            {"id":1,"token":"e2e4","bytes":[101],"logprob":-0.1,"top_logprobs":[
                {"id":1,"token":"e2e4","logprob":-0.1},{"id":2,"token":"d2d4","logprob":-3.4028234663852886e38}]}]}}]}"#;
        let a = read_completion(body, &pieces).expect("reads");
        assert_eq!(a.finish_reason.as_deref(), Some("length"));
        assert_eq!(a.tokens.len(), 1);
        assert_eq!(a.tokens[0].token, 1);
        assert_eq!(a.tokens[0].top[0], (1, -0.1));
        assert_eq!(a.tokens[0].top[1].0, 2);
        assert!(a.tokens[0].top[1].1 < -1e38);
    }

    #[test]
    fn reads_legacy_maps_by_id_or_by_text() {
        let body = br#"{"choices":[{"text":"","finish_reason":"stop","logprobs":{"tokens":["token_id:3","e2e4"],
            "token_logprobs":[-0.5,-0.2],"top_logprobs":[{"token_id:1":-1.5,"token_id:3":-0.5},{"e2e4":-0.2,"d2d4":-2.0}],
            "text_offset":[0,0]}}]}"#;
        let a = read_completion(body, &pieces).expect("reads");
        assert_eq!(a.tokens[0], WrittenToken { token: 3, top: vec![(3, -0.5), (1, -1.5)] });
        assert_eq!(a.tokens[1], WrittenToken { token: 1, top: vec![(1, -0.2), (2, -2.0)] });
        let unknown = br#"{"choices":[{"logprobs":{"tokens":["xyz"],"top_logprobs":[null]}}]}"#;
        let e = read_completion(unknown, &pieces).expect_err("unknown").to_string();
        assert!(e.contains("xyz") && e.contains("return_tokens_as_token_ids"), "{e}");
    }

    #[test]
    fn names_what_is_missing() {
        let none = br#"{"choices":[{"text":"e2e4","logprobs":null,"finish_reason":"length"}]}"#;
        assert_eq!(read_completion(none, &pieces), Err(WireError::NoLogprobs));
        let absent = br#"{"choices":[{"text":"e2e4"}]}"#;
        assert_eq!(read_completion(absent, &pieces), Err(WireError::NoLogprobs));
        assert!(matches!(read_completion(b"{\"choices\":[]}", &pieces), Err(WireError::Malformed(_))));
        assert!(matches!(read_completion(b"<html>", &pieces), Err(WireError::Malformed(_))));
    }

    #[test]
    fn reads_model_lists_and_detokenized_text() {
        let llama = br#"{"object":"list","data":[{"id":"tiny","aliases":["tiny"],"meta":{"n_vocab":2188,"n_ctx":1024}}]}"#;
        assert_eq!(read_models(llama, "tiny").expect("reads"), (vec!["tiny".into()], Some(1024)));
        let vllm = br#"{"data":[{"id":"other","max_model_len":9},{"id":"m","max_model_len":2048}]}"#;
        assert_eq!(read_models(vllm, "m").expect("reads"), (vec!["m".into(), "other".into()], Some(2048)));
        assert_eq!(read_models(vllm, "x").expect("reads"), (vec!["other".into(), "m".into()], None));
        assert_eq!(read_detokenized(br#"{"content":"a b"}"#).expect("llama"), "a b");
        assert_eq!(read_detokenized(br#"{"prompt":"a b"}"#).expect("vllm"), "a b");
        assert!(read_detokenized(b"{}").is_err());
    }

    #[test]
    fn request_is_greedy_over_token_ids() {
        let r = CompletionRequest {
            model: "m",
            prompt: &[5, 6],
            max_tokens: 3,
            temperature: 0.0,
            logprobs: 64,
            return_tokens_as_token_ids: true,
            stream: false,
        };
        let v: serde_json::Value = serde_json::to_value(&r).expect("json");
        assert_eq!(v["prompt"], serde_json::json!([5, 6]));
        assert_eq!(v["logprobs"], 64);
        assert_eq!(v["temperature"], 0.0);
    }
}
