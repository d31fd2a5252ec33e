//! `transport.auth.usrpwd.*`: user/password authentication, with Zenoh's keys and
//! dictionary file format.
//!
//! `user` and `password` are the credentials this node presents when it opens a link
//! (both or neither); `dictionary_file` lists, one `user:password` per line, whom it
//! accepts. Any of them makes the node require authentication of every node that
//! connects to it, as Zenoh does.

use serde_json::Value;
use weft_transport::establish::{Dictionary, UsrPwd};

use super::{invalid, ConfigError};

/// The user presented when opening links.
const USER: &str = "transport.auth.usrpwd.user";
/// Its password.
const PASSWORD: &str = "transport.auth.usrpwd.password";
/// The file of users accepted.
const DICTIONARY_FILE: &str = "transport.auth.usrpwd.dictionary_file";

/// The keys read here.
pub(super) const KEYS: &[&str] = &[USER, PASSWORD, DICTIONARY_FILE];

/// The keys' values as they are read.
#[derive(Default)]
pub(super) struct Settings {
    user: Option<String>,
    password: Option<String>,
    dictionary: Option<(String, Dictionary)>,
}

impl Settings {
    /// Reads one of [`KEYS`]; null leaves it unset.
    pub(super) fn set(&mut self, key: &str, v: &Value) -> Result<(), ConfigError> {
        if v.is_null() {
            return Ok(());
        }
        let text = v
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid(key, v, "a non-empty string, or null"))?;
        match key {
            USER => self.user = Some(text.to_string()),
            PASSWORD => self.password = Some(text.to_string()),
            _ => self.dictionary = Some((text.to_string(), read_dictionary(key, text)?)),
        }
        Ok(())
    }

    /// The settings, `None` when nothing is set; `listens` says whether the node has
    /// listen endpoints (for a warning about whom it will refuse).
    pub(super) fn build(
        self,
        listens: bool,
        warnings: &mut Vec<String>,
    ) -> Result<Option<UsrPwd>, ConfigError> {
        let mut usrpwd = UsrPwd::new();
        match (self.user, self.password) {
            (Some(user), Some(password)) => usrpwd = usrpwd.with_credentials(&user, &password),
            (Some(_), None) => {
                return Err(invalid(
                    PASSWORD,
                    &Value::Null,
                    "a password, since transport.auth.usrpwd.user is set",
                ))
            }
            (None, Some(_)) => {
                return Err(invalid(
                    USER,
                    &Value::Null,
                    "a user, since transport.auth.usrpwd.password is set",
                ))
            }
            (None, None) => {}
        }
        match self.dictionary {
            Some((path, dictionary)) => {
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
