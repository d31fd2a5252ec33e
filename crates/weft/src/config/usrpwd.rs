//! `transport.auth.usrpwd.*`: user/password authentication, with Zenoh's keys and
//! dictionary file format.
//!
//! `user` and `password` are the credentials this node presents when it opens a link
//! (both or neither); `dictionary_file` lists, one `user:password` per line, whom it
//! accepts. Any of them makes the node require authentication of every node that
//! connects to it, as Zenoh does.

use serde_json::Value;
use weft_proto::core::WhatAmI;
use weft_transport::establish::{Dictionary, UsrPwd};

use super::schema;
use super::setting::{OrNull, Setting};
use super::values::Text;
use super::ConfigError;

/// The user presented when opening links.
const USER: &str = "transport.auth.usrpwd.user";
/// Its password.
const PASSWORD: &str = "transport.auth.usrpwd.password";
/// The file of users accepted.
const DICTIONARY_FILE: &str = "transport.auth.usrpwd.dictionary_file";

/// The text a key gives a node of `mode`, if any.
fn text(setting: &Setting<OrNull<Text>>, mode: WhatAmI) -> Option<&str> {
    setting
        .get(mode)
        .and_then(|t| t.0.as_ref())
        .map(|t| t.0.as_str())
}

/// The settings of `section` for a node of `mode`, `None` when nothing is set; `listens`
/// says whether the node has listen endpoints (for a warning about whom it will refuse).
pub(super) fn build(
    section: &schema::UsrPwd,
    mode: WhatAmI,
    listens: bool,
    warnings: &mut Vec<String>,
) -> Result<Option<UsrPwd>, ConfigError> {
    let mut usrpwd = UsrPwd::new();
    let missing = |key: &str, expected: &str| ConfigError::InvalidValue {
        key: key.into(),
        value: Value::Null.to_string(),
        expected: expected.into(),
    };
    match (text(&section.user, mode), text(&section.password, mode)) {
        (Some(user), Some(password)) => usrpwd = usrpwd.with_credentials(user, password),
        (Some(_), None) => {
            return Err(missing(
                PASSWORD,
                "a password, since transport.auth.usrpwd.user is set",
            ))
        }
        (None, Some(_)) => {
            return Err(missing(
                USER,
                "a user, since transport.auth.usrpwd.password is set",
            ))
        }
        (None, None) => {}
    }
    match text(&section.dictionary_file, mode) {
        Some(path) => {
            let dictionary = read_dictionary(DICTIONARY_FILE, path)?;
            if dictionary.is_empty() {
                warnings.push(format!(
                    "`{DICTIONARY_FILE}`: {path} lists no user: every node connecting \
                     to this one will be refused"
                ));
            }
            usrpwd = usrpwd.with_dictionary(dictionary);
        }
        None if listens && usrpwd.is_enabled() => warnings.push(format!(
            "`{USER}` is set without `{DICTIONARY_FILE}`: as in Zenoh, every node \
             connecting to this one will be refused"
        )),
        None => {}
    }
    Ok(usrpwd.is_enabled().then_some(usrpwd))
}

/// Reads and parses a dictionary file; errors name `key` and the file.
fn read_dictionary(key: &str, path: &str) -> Result<Dictionary, ConfigError> {
    let fail = |reason: String| ConfigError::InvalidFile {
        key: key.into(),
        path: path.into(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    Dictionary::parse(&text).map_err(|e| fail(e.to_string()))
}
