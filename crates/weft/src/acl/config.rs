//! Zenoh's `access_control` configuration, read and checked: rules, subjects and the
//! policies tying them together. Every mistake Zenoh refuses is refused here, naming the
//! field (`access_control.rules[1].messages`), so a policy never silently means less than
//! it says.
//!
//! The section and the objects of its lists are declared once each, as serde structs that
//! refuse fields they do not declare (`Section`, `RuleFields`, `SubjectFields`,
//! `PolicyFields`); their values are checked as they are read.

use std::collections::HashSet;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use thiserror::Error;
use weft_keyexpr::OwnedKeyExpr;
use weft_proto::core::ZenohId;

/// The messages a rule can allow or deny, as Zenoh names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Message {
    /// A Put.
    Put,
    /// A Delete.
    Delete,
    /// A subscriber's declaration (and withdrawal).
    DeclareSubscriber,
    /// A query (a get).
    Query,
    /// A queryable's declaration (and withdrawal).
    DeclareQueryable,
    /// A reply to a query.
    Reply,
    /// A liveliness token's declaration (and withdrawal).
    LivelinessToken,
    /// A liveliness subscriber (an interest in future tokens).
    DeclareLivelinessSubscriber,
    /// A liveliness get (an interest in current tokens).
    LivelinessQuery,
}

impl Message {
    /// Every message, in Zenoh's order.
    pub const ALL: [Self; 9] = [
        Self::Put,
        Self::Delete,
        Self::DeclareSubscriber,
        Self::Query,
        Self::DeclareQueryable,
        Self::Reply,
        Self::LivelinessToken,
        Self::DeclareLivelinessSubscriber,
        Self::LivelinessQuery,
    ];

    /// The configuration's name for it (`declare_subscriber`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Put => "put",
            Self::Delete => "delete",
            Self::DeclareSubscriber => "declare_subscriber",
            Self::Query => "query",
            Self::DeclareQueryable => "declare_queryable",
            Self::Reply => "reply",
            Self::LivelinessToken => "liveliness_token",
            Self::DeclareLivelinessSubscriber => "declare_liveliness_subscriber",
            Self::LivelinessQuery => "liveliness_query",
        }
    }

    /// The message named `name` in a configuration.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// Which way a message goes through a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flow {
    /// Received from another node.
    Ingress,
    /// Sent to another node.
    Egress,
}

impl Flow {
    /// The configuration's name for it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Ingress => "ingress",
            Self::Egress => "egress",
        }
    }

    /// The flow named `name` in a configuration.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Ingress, Self::Egress]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// What a rule (or the default) decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// Let the message through.
    Allow,
    /// Drop it.
    Deny,
}

impl Permission {
    /// The configuration's name for it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        match name {
            "allow" => Some(Self::Allow),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// The link protocols a subject can name, as Zenoh spells them.
pub const LINK_PROTOCOLS: [&str; 9] = [
    "tcp",
    "udp",
    "tls",
    "quic",
    "ws",
    "serial",
    "unixsock-stream",
    "unixpipe",
    "vsock",
];

/// One rule: a permission for some messages, flows and key expressions.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Its id, unique among the rules.
    pub id: String,
    /// The messages it applies to.
    pub messages: Vec<Message>,
    /// The flows it applies to (both when the configuration leaves them out).
    pub flows: Vec<Flow>,
    /// Allow or deny.
    pub permission: Permission,
    /// The key expressions it covers: a message's key expression must be included in
    /// one of them.
    pub key_exprs: Vec<OwnedKeyExpr>,
}

/// One subject: properties a transport must have (an absent property matches anything;
/// a list matches any of its values).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SubjectSpec {
    /// Its id, unique among the subjects.
    pub id: String,
    /// Network interfaces the link is on.
    pub interfaces: Option<Vec<String>>,
    /// Common names of the peer's TLS certificate.
    pub cert_common_names: Option<Vec<String>>,
    /// User names of user/password authentication.
    pub usernames: Option<Vec<String>>,
    /// Link protocols (`tcp`, `udp`, ...).
    pub link_protocols: Option<Vec<String>>,
    /// The peers' ZenohIDs (not authenticated: for trials, as Zenoh warns).
    pub zids: Option<Vec<ZenohId>>,
}

/// One policy: rules applied to subjects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySpec {
    /// Its id, if it has one (unique among the policies).
    pub id: Option<String>,
    /// The ids of its rules.
    pub rules: Vec<String>,
    /// The ids of its subjects.
    pub subjects: Vec<String>,
}

/// The `access_control` section.
#[derive(Debug, Clone, PartialEq)]
pub struct AclConfig {
    /// `enabled`: off by default.
    pub enabled: bool,
    /// `default_permission`: what applies where no rule decides (deny by default).
    pub default_permission: Permission,
    /// `rules`.
    pub rules: Vec<Rule>,
    /// `subjects`.
    pub subjects: Vec<SubjectSpec>,
    /// `policies`.
    pub policies: Vec<PolicySpec>,
    /// `deny_intersecting`, weft's own (off by default, as in Zenoh): a deny rule also
    /// denies a message whose key expression intersects the rule's without being
    /// included in it (a put on `a/*` when `a/b` is denied), which Zenoh lets through.
    pub deny_intersecting: bool,
}

impl Default for AclConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            default_permission: Permission::Deny,
            rules: Vec::new(),
            subjects: Vec::new(),
            policies: Vec::new(),
            deny_intersecting: false,
        }
    }
}

/// A mistake in the `access_control` section.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("`{field}`: {problem}")]
pub struct AclError {
    /// The field, dotted, with list indices (`access_control.rules[1].messages`).
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

fn error(field: impl Into<String>, problem: impl Into<String>) -> AclError {
    AclError {
        field: field.into(),
        problem: problem.into(),
    }
}

/// The `access_control` section, as written.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct Section {
    enabled: Value,
    default_permission: Value,
    rules: Value,
    subjects: Value,
    policies: Value,
    /// weft's own key: Zenoh has none of this name.
    deny_intersecting: Value,
}

/// A rule, as written.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct RuleFields {
    id: Value,
    messages: Value,
    flows: Value,
    permission: Value,
    key_exprs: Value,
}

/// A subject, as written.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct SubjectFields {
    id: Value,
    interfaces: Value,
    cert_common_names: Value,
    usernames: Value,
    link_protocols: Value,
    zids: Value,
}

/// A policy, as written.
#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct PolicyFields {
    id: Value,
    rules: Value,
    subjects: Value,
}

/// Reads the object `v` at `field` as a `T`: a field `T` does not declare is refused,
/// naming it and the fields `T` has.
fn fields<T: DeserializeOwned>(v: &Value, field: &str) -> Result<T, AclError> {
    if !v.is_object() {
        return Err(error(field, "expected an object"));
    }
    serde_path_to_error::deserialize(v).map_err(|e| {
        let message = e.inner().to_string();
        let known = message
            .split_once(", expected one of ")
            .map_or("", |(_, known)| known)
            .replace('`', "");
        error(
            format!("{field}.{}", e.path()),
            format!("unknown field (known: {known})"),
        )
    })
}

impl AclConfig {
    /// Reads the `access_control` section (the object under that key).
    pub fn from_value(section: &Value) -> Result<Self, AclError> {
        const FIELD: &str = "access_control";
        let section: Section = fields(section, FIELD)?;
        let mut config = Self::default();
        if let Some(v) = present(&section.enabled) {
            config.enabled = v
                .as_bool()
                .ok_or_else(|| error("access_control.enabled", "expected true or false"))?;
        }
        if let Some(v) = present(&section.default_permission) {
            config.default_permission =
                v.as_str().and_then(Permission::from_name).ok_or_else(|| {
                    error(
                        "access_control.default_permission",
                        "expected \"allow\" or \"deny\"",
                    )
                })?;
        }
        if let Some(v) = present(&section.deny_intersecting) {
            config.deny_intersecting = v.as_bool().ok_or_else(|| {
                error("access_control.deny_intersecting", "expected true or false")
            })?;
        }
        // The lists are read whether or not access control is enabled (a mistake in them
        // is refused all the same, as Zenoh does); only an enabled one needs all three.
        let lists = [&section.rules, &section.subjects, &section.policies].map(present);
        if config.enabled && lists.iter().any(Option::is_none) {
            return Err(error(
                FIELD,
                "enabled, it needs all three lists: rules, subjects and policies",
            ));
        }
        let [rules, subjects, policies] = lists;
        if let Some(rules) = rules {
            config.rules = list(rules, "access_control.rules")?
                .iter()
                .enumerate()
                .map(|(i, v)| rule(v, &format!("access_control.rules[{i}]")))
                .collect::<Result<_, _>>()?;
        }
        if let Some(subjects) = subjects {
            config.subjects = list(subjects, "access_control.subjects")?
                .iter()
                .enumerate()
                .map(|(i, v)| subject(v, &format!("access_control.subjects[{i}]")))
                .collect::<Result<_, _>>()?;
        }
        if let Some(policies) = policies {
            config.policies = list(policies, "access_control.policies")?
                .iter()
                .enumerate()
                .map(|(i, v)| policy(v, &format!("access_control.policies[{i}]")))
                .collect::<Result<_, _>>()?;
        }
        if !config.enabled {
            return Ok(config);
        }
        // With a list empty, Zenoh applies the default permission to everyone (and says
        // so), whatever the others hold.
        if !config.is_partial() {
            config.check_references()?;
        }
        Ok(config)
    }

    /// Whether one of the three lists is empty: then only the default permission
    /// applies.
    pub fn is_partial(&self) -> bool {
        self.rules.is_empty() || self.subjects.is_empty() || self.policies.is_empty()
    }

    /// Ids are unique, and every id a policy names exists.
    fn check_references(&self) -> Result<(), AclError> {
        unique(
            self.rules.iter().map(|r| r.id.as_str()),
            "access_control.rules",
        )?;
        unique(
            self.subjects.iter().map(|s| s.id.as_str()),
            "access_control.subjects",
        )?;
        unique(
            self.policies.iter().filter_map(|p| p.id.as_deref()),
            "access_control.policies",
        )?;
        for (i, p) in self.policies.iter().enumerate() {
            for r in &p.rules {
                if !self.rules.iter().any(|rule| &rule.id == r) {
                    let field = format!("access_control.policies[{i}].rules");
                    return Err(error(field, format!("no rule has the id {r:?}")));
                }
            }
            for s in &p.subjects {
                if !self.subjects.iter().any(|subject| &subject.id == s) {
                    let field = format!("access_control.policies[{i}].subjects");
                    return Err(error(field, format!("no subject has the id {s:?}")));
                }
            }
        }
        Ok(())
    }
}

fn unique<'a>(ids: impl Iterator<Item = &'a str>, field: &str) -> Result<(), AclError> {
    let mut seen = HashSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(error(field, format!("the id {id:?} is used twice")));
        }
    }
    Ok(())
}

/// A field's value, `None` when absent or null.
fn present(v: &Value) -> Option<&Value> {
    Some(v).filter(|v| !v.is_null())
}

fn list<'v>(v: &'v Value, field: &str) -> Result<&'v Vec<Value>, AclError> {
    v.as_array().ok_or_else(|| error(field, "expected a list"))
}

/// The `id` field `v` of the object at `field`.
fn id(v: &Value, field: &str) -> Result<String, AclError> {
    let field = format!("{field}.id");
    let id = present(v)
        .ok_or_else(|| error(&field, "missing"))?
        .as_str()
        .ok_or_else(|| error(&field, "expected a string"))?;
    if id.trim().is_empty() {
        return Err(error(field, "empty"));
    }
    Ok(id.to_owned())
}

/// A non-empty list of non-empty strings at `field`, if present.
fn strings(v: &Value, field: String) -> Result<Option<Vec<String>>, AclError> {
    let Some(v) = present(v) else {
        return Ok(None);
    };
    let items = list(v, &field)?;
    if items.is_empty() {
        return Err(error(
            field,
            "an empty list matches nothing: leave the field out",
        ));
    }
    items
        .iter()
        .map(|item| match item.as_str() {
            Some(s) if !s.trim().is_empty() => Ok(s.to_owned()),
            _ => Err(error(&field, "expected non-empty strings")),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn rule(v: &Value, field: &str) -> Result<Rule, AclError> {
    let r: RuleFields = fields(v, field)?;
    let id = id(&r.id, field)?;
    let messages = strings(&r.messages, format!("{field}.messages"))?
        .ok_or_else(|| error(format!("{field}.messages"), "missing"))?
        .iter()
        .map(|m| {
            Message::from_name(m).ok_or_else(|| {
                let known: Vec<&str> = Message::ALL.iter().map(|m| m.name()).collect();
                error(
                    format!("{field}.messages"),
                    format!("unknown message {m:?} (known: {})", known.join(", ")),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let flows = match strings(&r.flows, format!("{field}.flows"))? {
        None => vec![Flow::Ingress, Flow::Egress],
        Some(names) => names
            .iter()
            .map(|f| {
                Flow::from_name(f).ok_or_else(|| {
                    error(
                        format!("{field}.flows"),
                        format!("unknown flow {f:?} (ingress or egress)"),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let permission = present(&r.permission)
        .and_then(Value::as_str)
        .and_then(Permission::from_name)
        .ok_or_else(|| {
            error(
                format!("{field}.permission"),
                "expected \"allow\" or \"deny\"",
            )
        })?;
    let key_exprs = strings(&r.key_exprs, format!("{field}.key_exprs"))?
        .ok_or_else(|| error(format!("{field}.key_exprs"), "missing"))?
        .into_iter()
        .map(|k| {
            OwnedKeyExpr::new(k.as_str()).map_err(|e| {
                error(
                    format!("{field}.key_exprs"),
                    format!("{k:?} is not a key expression: {e}"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Rule {
        id,
        messages,
        flows,
        permission,
        key_exprs,
    })
}

fn subject(v: &Value, field: &str) -> Result<SubjectSpec, AclError> {
    let s: SubjectFields = fields(v, field)?;
    let link_protocols = strings(&s.link_protocols, format!("{field}.link_protocols"))?;
    for p in link_protocols.iter().flatten() {
        if !LINK_PROTOCOLS.contains(&p.as_str()) {
            return Err(error(
                format!("{field}.link_protocols"),
                format!(
                    "unknown link protocol {p:?} (known: {})",
                    LINK_PROTOCOLS.join(", ")
                ),
            ));
        }
    }
    let zids = strings(&s.zids, format!("{field}.zids"))?
        .map(|zids| {
            zids.iter()
                .map(|z| {
                    z.parse::<ZenohId>().map_err(|_| {
                        error(format!("{field}.zids"), format!("{z:?} is not a ZenohID"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    Ok(SubjectSpec {
        id: id(&s.id, field)?,
        interfaces: strings(&s.interfaces, format!("{field}.interfaces"))?,
        cert_common_names: strings(&s.cert_common_names, format!("{field}.cert_common_names"))?,
        usernames: strings(&s.usernames, format!("{field}.usernames"))?,
        link_protocols,
        zids,
    })
}

fn policy(v: &Value, field: &str) -> Result<PolicySpec, AclError> {
    let p: PolicyFields = fields(v, field)?;
    let id = match present(&p.id) {
        None => None,
        Some(_) => Some(id(&p.id, field)?),
    };
    let rules = strings(&p.rules, format!("{field}.rules"))?
        .ok_or_else(|| error(format!("{field}.rules"), "missing"))?;
    let subjects = strings(&p.subjects, format!("{field}.subjects"))?
        .ok_or_else(|| error(format!("{field}.subjects"), "missing"))?;
    Ok(PolicySpec {
        id,
        rules,
        subjects,
    })
}
