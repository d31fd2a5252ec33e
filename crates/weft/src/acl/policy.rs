//! The access-control decision, as Zenoh makes it, with its reason.
//!
//! A configuration's subjects expand to combinations (one value per property, or any);
//! a transport matches the combinations whose every property matches it. As in Zenoh,
//! two subjects with the same combination share it, and the rules of both apply to it
//! together (a deny rule of one wins over an allow rule of the other). For one
//! combination, a message of a kind, on a flow and a key expression is denied if a deny
//! rule's key expression includes the message's; otherwise allowed if the default is
//! allow, or if an allow rule's key expression includes it; otherwise denied. Over all the
//! combinations a transport matches: allowed if one allows; else denied if any matched;
//! with none matched (or no policy at all), the default applies.
//!
//! So a message on a key expression that intersects a denied one without being included
//! in it (a put on `a/*` when `a/b` is denied) is not denied by that rule, and reaches
//! what matches `a/b`. With `deny_intersecting` (weft's own), a deny rule denies every
//! message whose key expression intersects the rule's; [`AccessControl::bypasses`]
//! names the deny rules that such messages get around otherwise.

use std::collections::HashMap;

use weft_keyexpr::{KeyExpr, KeyExprIndex};
use weft_proto::core::ZenohId;

use super::config::{AclConfig, Flow, Message, Permission, SubjectSpec};

/// What a transport is, for access control: each property it has (a property a link
/// does not have, such as a certificate name on TCP, is `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubjectQuery {
    /// The network interface the link is on.
    pub interface: Option<String>,
    /// The common name of the peer's TLS certificate.
    pub cert_common_name: Option<String>,
    /// The user name the peer authenticated with.
    pub username: Option<String>,
    /// The link protocol (`tcp`, `udp`, `unixsock-stream`, ...).
    pub link_protocol: Option<String>,
    /// The peer's ZenohID.
    pub zid: Option<ZenohId>,
}

/// One combination of property values (`None`: any), shared by the subjects that
/// expand to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Combination {
    interface: Option<String>,
    cert_common_name: Option<String>,
    username: Option<String>,
    link_protocol: Option<String>,
    zid: Option<ZenohId>,
}

fn property_matches<T: PartialEq>(wanted: Option<&T>, has: Option<&T>) -> bool {
    match (wanted, has) {
        (None, _) => true,
        (Some(w), Some(h)) => w == h,
        (Some(_), None) => false,
    }
}

impl Combination {
    fn matches(&self, q: &SubjectQuery) -> bool {
        property_matches(self.interface.as_ref(), q.interface.as_ref())
            && property_matches(self.cert_common_name.as_ref(), q.cert_common_name.as_ref())
            && property_matches(self.username.as_ref(), q.username.as_ref())
            && property_matches(self.link_protocol.as_ref(), q.link_protocol.as_ref())
            && property_matches(self.zid.as_ref(), q.zid.as_ref())
    }
}

/// Every combination of a subject's values (a value listed twice gives one).
fn combinations(s: &SubjectSpec) -> Vec<Combination> {
    fn values<T: Clone>(list: &Option<Vec<T>>) -> Vec<Option<T>> {
        match list {
            None => vec![None],
            Some(l) => l.iter().cloned().map(Some).collect(),
        }
    }
    let mut out = Vec::new();
    for interface in values(&s.interfaces) {
        for cert_common_name in values(&s.cert_common_names) {
            for username in values(&s.usernames) {
                for link_protocol in values(&s.link_protocols) {
                    for zid in values(&s.zids) {
                        let c = Combination {
                            interface: interface.clone(),
                            cert_common_name: cert_common_name.clone(),
                            username: username.clone(),
                            link_protocol: link_protocol.clone(),
                            zid,
                        };
                        if !out.contains(&c) {
                            out.push(c);
                        }
                    }
                }
            }
        }
    }
    out
}

/// Where a rule entry came from, to explain a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Origin {
    pub(super) rule: String,
    subject: String,
    policy: Option<String>,
    rule_key: String,
}

/// Why a decision was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// Access control is off.
    Disabled,
    /// A rule decided: its id, the subject it applied through, the policy that tied them
    /// (its id, if it has one), and the rule's key expression that included the key.
    Rule {
        /// The rule's id.
        rule: String,
        /// The subject's id.
        subject: String,
        /// The policy's id, if it has one.
        policy: Option<String>,
        /// The rule's key expression that included the message's.
        rule_key: String,
    },
    /// No subject of the configuration matches the transport: the default applies.
    NoSubject,
    /// Subjects match but no rule of theirs covers the message: the default applies
    /// (naming the subjects).
    NoRule {
        /// The ids of the subjects that matched.
        subjects: Vec<String>,
    },
    /// The configuration has an empty rules, subjects or policies list: the default
    /// applies to everyone.
    NoPolicy,
}

/// A decision and its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Allow or deny.
    pub permission: Permission,
    /// Why.
    pub reason: Reason,
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.permission.name())?;
        match &self.reason {
            Reason::Disabled => write!(f, "access control is disabled"),
            Reason::Rule {
                rule,
                subject,
                policy,
                rule_key,
            } => {
                write!(f, "rule {rule:?} (key {rule_key}) for subject {subject:?}")?;
                match policy {
                    Some(p) => write!(f, " in policy {p:?}"),
                    None => write!(f, " in a policy without id"),
                }
            }
            Reason::NoSubject => write!(
                f,
                "no subject matches: the default permission ({}) applies",
                self.permission.name()
            ),
            Reason::NoRule { subjects } => write!(
                f,
                "no rule of subject(s) {subjects:?} covers it: the default permission ({}) \
                 applies",
                self.permission.name()
            ),
            Reason::NoPolicy => write!(
                f,
                "the rules, subjects or policies list is empty: the default permission ({}) \
                 applies to everyone",
                self.permission.name()
            ),
        }
    }
}

/// The rules of one combination for one flow, message and permission.
pub(super) type RuleIndex = KeyExprIndex<Vec<Origin>>;

/// What the log lines about denials are paced by: the peer's address, the flow, the
/// message kind.
pub(super) type DenialSource = (Option<std::net::IpAddr>, Flow, Message);

/// A compiled access-control configuration.
pub struct AccessControl {
    pub(super) enabled: bool,
    pub(super) default: Permission,
    combinations: Vec<Combination>,
    /// The ids of the subjects each combination comes from, sorted.
    names: Vec<Vec<String>>,
    /// (combination, flow, message, permission) -> the rules' key expressions.
    pub(super) rules: HashMap<(usize, Flow, Message, Permission), RuleIndex>,
    pub(super) partial: bool,
    /// A deny rule denies what intersects its key expressions, not only what they
    /// include.
    pub(super) deny_intersecting: bool,
    /// The pace of the log lines about denials, per peer address, flow and message kind.
    pub(super) denial_log: std::sync::Mutex<crate::log_limit::LogLimit<DenialSource>>,
}

impl AccessControl {
    /// Compiles a (checked) configuration.
    pub fn new(config: &AclConfig) -> Self {
        let mut control = Self {
            enabled: config.enabled,
            default: config.default_permission,
            combinations: Vec::new(),
            names: Vec::new(),
            rules: HashMap::new(),
            partial: config.is_partial(),
            deny_intersecting: config.deny_intersecting,
            denial_log: std::sync::Mutex::default(),
        };
        if !config.enabled || control.partial {
            return control;
        }
        // Each subject's combinations, by index in `combinations`: the same combination
        // from two subjects is one.
        let mut of_subject: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut index_of: HashMap<Combination, usize> = HashMap::new();
        for s in &config.subjects {
            for c in combinations(s) {
                let next = control.combinations.len();
                let at = *index_of.entry(c.clone()).or_insert(next);
                if at == next {
                    control.combinations.push(c);
                    control.names.push(Vec::new());
                }
                if !control.names[at].contains(&s.id) {
                    control.names[at].push(s.id.clone());
                    control.names[at].sort();
                }
                of_subject.entry(s.id.as_str()).or_default().push(at);
            }
        }
        for p in &config.policies {
            for rule_id in &p.rules {
                let Some(rule) = config.rules.iter().find(|r| &r.id == rule_id) else {
                    continue;
                };
                for subject in &p.subjects {
                    for &c in of_subject.get(subject.as_str()).into_iter().flatten() {
                        for &flow in &rule.flows {
                            for &message in &rule.messages {
                                let index = control
                                    .rules
                                    .entry((c, flow, message, rule.permission))
                                    .or_default();
                                for key in &rule.key_exprs {
                                    let origin = Origin {
                                        rule: rule.id.clone(),
                                        subject: subject.clone(),
                                        policy: p.id.clone(),
                                        rule_key: key.to_string(),
                                    };
                                    match index.get_mut(key.as_key_expr()) {
                                        Some(origins) => origins.push(origin),
                                        None => {
                                            index.insert(key.as_key_expr(), vec![origin]);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        control
    }

    /// Whether access control is on.
    pub const fn enabled(&self) -> bool {
        self.enabled
    }

    /// The combinations (by index) a transport with these properties matches.
    pub fn subjects_of(&self, q: &SubjectQuery) -> Vec<usize> {
        (0..self.combinations.len())
            .filter(|&c| self.combinations[c].matches(q))
            .collect()
    }

    /// The decision for a message of kind `message` on `key`, on `flow`, for a transport
    /// matching the combinations `subjects` (from [`AccessControl::subjects_of`]).
    pub fn decide(
        &self,
        subjects: &[usize],
        flow: Flow,
        message: Message,
        key: KeyExpr<'_>,
    ) -> Decision {
        let default = |reason| Decision {
            permission: self.default,
            reason,
        };
        if !self.enabled {
            return Decision {
                permission: Permission::Allow,
                reason: Reason::Disabled,
            };
        }
        if self.partial {
            return default(Reason::NoPolicy);
        }
        if subjects.is_empty() {
            return default(Reason::NoSubject);
        }
        let mut denied = None;
        for &c in subjects {
            let decision = self.decide_for(c, flow, message, key);
            match decision.permission {
                Permission::Allow => return decision,
                Permission::Deny => {
                    if denied.is_none() || matches!(decision.reason, Reason::Rule { .. }) {
                        denied = Some(decision);
                    }
                }
            }
        }
        let mut decision = denied.unwrap_or_else(|| default(Reason::NoSubject));
        if let Reason::NoRule { subjects: names } = &mut decision.reason {
            *names = self.names(subjects);
        }
        decision
    }

    /// The decision for one combination.
    fn decide_for(&self, c: usize, flow: Flow, message: Message, key: KeyExpr<'_>) -> Decision {
        let found = |permission| {
            let index = self.rules.get(&(c, flow, message, permission))?;
            let mut first = None;
            let mut note = |_: KeyExpr<'_>, origins: &Vec<Origin>| {
                if first.is_none() {
                    first = origins.first().cloned();
                }
            };
            if permission == Permission::Deny && self.deny_intersecting {
                index.for_each_intersecting(key, &mut note);
            } else {
                index.for_each_including(key, &mut note);
            }
            first.map(|o: Origin| Decision {
                permission,
                reason: Reason::Rule {
                    rule: o.rule,
                    subject: o.subject,
                    policy: o.policy,
                    rule_key: o.rule_key,
                },
            })
        };
        if let Some(deny) = found(Permission::Deny) {
            return deny;
        }
        let no_rule = Decision {
            permission: self.default,
            reason: Reason::NoRule {
                subjects: self.names[c].clone(),
            },
        };
        // With the default allow, an allow rule only names the reason.
        found(Permission::Allow).unwrap_or(no_rule)
    }

    /// The subject ids of combinations, each once.
    fn names(&self, combinations: &[usize]) -> Vec<String> {
        let mut names: Vec<String> = combinations
            .iter()
            .flat_map(|&c| self.names[c].iter().cloned())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}
