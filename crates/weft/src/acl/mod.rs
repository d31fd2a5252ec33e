//! Access control with Zenoh 1.10's `access_control` configuration: which messages a
//! transport may send or receive, by who it is (interface, certificate name, user name,
//! link protocol, ZenohID) and by key expression.
//!
//! `config` reads and checks the section; `policy` compiles it and decides, giving the
//! rule, subject and policy that decided (`weft acl check` shows them, so an operator can
//! test a policy before deploying it). `bypass` names the deny rules a wildcard gets
//! around under Zenoh's semantics (weft warns of them), which `deny_intersecting`, weft's
//! own setting, closes.

pub mod bypass;
pub mod config;
pub mod enforcer;
pub mod policy;

pub use bypass::Bypass;
pub use config::{AclConfig, AclError, Flow, Message, Permission};
pub use enforcer::Enforcer;
pub use policy::{AccessControl, Decision, Reason, SubjectQuery};

#[cfg(test)]
mod tests {
    use super::*;
    use weft_keyexpr::KeyExpr;

    fn control(text: &str) -> AccessControl {
        let value: serde_json::Value = json5::from_str(text).unwrap();
        AccessControl::new(&AclConfig::from_value(&value).unwrap())
    }

    fn on(interface: &str) -> SubjectQuery {
        SubjectQuery {
            interface: Some(interface.into()),
            link_protocol: Some("tcp".into()),
            ..SubjectQuery::default()
        }
    }

    fn decide(
        acl: &AccessControl,
        q: &SubjectQuery,
        flow: Flow,
        m: Message,
        key: &str,
    ) -> Decision {
        acl.decide(&acl.subjects_of(q), flow, m, KeyExpr::new(key).unwrap())
    }

    fn allowed(acl: &AccessControl, q: &SubjectQuery, flow: Flow, m: Message, key: &str) -> bool {
        decide(acl, q, flow, m, key).permission == Permission::Allow
    }

    const DEMO: &str = r#"{
        enabled: true, default_permission: "deny",
        rules: [
          { id: "demo", messages: ["put", "declare_subscriber"], flows: ["ingress"],
            permission: "allow", key_exprs: ["demo/**"] },
          { id: "no-secret", messages: ["put"], permission: "deny",
            key_exprs: ["demo/secret/**"] },
          { id: "one-level", messages: ["query"], permission: "allow", key_exprs: ["q/*"] },
        ],
        subjects: [ { id: "local", interfaces: ["lo"] } ],
        policies: [ { id: "p", rules: ["demo", "no-secret", "one-level"], subjects: ["local"] } ],
    }"#;

    #[test]
    fn a_rule_allows_what_its_key_expressions_include_for_its_subjects() {
        let acl = control(DEMO);
        let lo = on("lo");
        assert!(allowed(&acl, &lo, Flow::Ingress, Message::Put, "demo/a"));
        assert!(allowed(
            &acl,
            &lo,
            Flow::Ingress,
            Message::DeclareSubscriber,
            "demo/**"
        ));
        // Another message, flow, key or interface: the default (deny).
        assert!(!allowed(
            &acl,
            &lo,
            Flow::Ingress,
            Message::Delete,
            "demo/a"
        ));
        assert!(!allowed(&acl, &lo, Flow::Egress, Message::Put, "demo/a"));
        assert!(!allowed(&acl, &lo, Flow::Ingress, Message::Put, "other/a"));
        let d = decide(&acl, &on("eth0"), Flow::Ingress, Message::Put, "demo/a");
        assert_eq!(d.reason, Reason::NoSubject);
        assert_eq!(d.permission, Permission::Deny);
    }

    #[test]
    fn a_deny_rule_wins_and_says_which_rule_it_was() {
        let acl = control(DEMO);
        let d = decide(
            &acl,
            &on("lo"),
            Flow::Ingress,
            Message::Put,
            "demo/secret/x",
        );
        assert_eq!(d.permission, Permission::Deny);
        assert_eq!(
            d.reason,
            Reason::Rule {
                rule: "no-secret".into(),
                subject: "local".into(),
                policy: Some("p".into()),
                rule_key: "demo/secret/**".into(),
            }
        );
        assert_eq!(
            d.to_string(),
            "deny: rule \"no-secret\" (key demo/secret/**) for subject \"local\" in policy \"p\""
        );
    }

    #[test]
    fn a_rule_must_include_the_whole_key_expression() {
        let acl = control(DEMO);
        let lo = on("lo");
        assert!(allowed(&acl, &lo, Flow::Egress, Message::Query, "q/a"));
        assert!(!allowed(&acl, &lo, Flow::Egress, Message::Query, "q/a/b"));
        assert!(!allowed(&acl, &lo, Flow::Egress, Message::Query, "q/**"));
    }

    #[test]
    fn with_default_allow_only_deny_rules_matter() {
        let acl = control(
            r#"{ enabled: true, default_permission: "allow",
                 rules: [ { id: "r", messages: ["put"], flows: ["egress"], permission: "deny",
                            key_exprs: ["private/**"] } ],
                 subjects: [ { id: "all" } ],
                 policies: [ { rules: ["r"], subjects: ["all"] } ] }"#,
        );
        let any = SubjectQuery::default();
        assert!(allowed(
            &acl,
            &any,
            Flow::Ingress,
            Message::Put,
            "private/x"
        ));
        assert!(!allowed(
            &acl,
            &any,
            Flow::Egress,
            Message::Put,
            "private/x"
        ));
        assert!(allowed(&acl, &any, Flow::Egress, Message::Put, "public/x"));
    }

    #[test]
    fn one_matching_subject_that_allows_is_enough() {
        let acl = control(
            r#"{ enabled: true,
                 rules: [ { id: "a", messages: ["put"], permission: "allow", key_exprs: ["a/**"] },
                          { id: "b", messages: ["put"], permission: "allow", key_exprs: ["b/**"] } ],
                 subjects: [ { id: "tcp", link_protocols: ["tcp"] },
                             { id: "alice", usernames: ["alice"] } ],
                 policies: [ { rules: ["a"], subjects: ["tcp"] },
                             { rules: ["b"], subjects: ["alice"] } ] }"#,
        );
        let alice_on_tcp = SubjectQuery {
            username: Some("alice".into()),
            link_protocol: Some("tcp".into()),
            ..SubjectQuery::default()
        };
        assert!(allowed(
            &acl,
            &alice_on_tcp,
            Flow::Ingress,
            Message::Put,
            "a/1"
        ));
        assert!(allowed(
            &acl,
            &alice_on_tcp,
            Flow::Ingress,
            Message::Put,
            "b/1"
        ));
        let anonymous = on("lo");
        assert!(allowed(
            &acl,
            &anonymous,
            Flow::Ingress,
            Message::Put,
            "a/1"
        ));
        let d = decide(&acl, &anonymous, Flow::Ingress, Message::Put, "b/1");
        assert_eq!(d.permission, Permission::Deny);
        assert_eq!(
            d.reason,
            Reason::NoRule {
                subjects: vec!["tcp".into()]
            }
        );
    }

    #[test]
    fn subjects_with_the_same_properties_share_their_rules_and_a_deny_wins() {
        // As in Zenoh: "a" and "b" are the same subject for the policy, so b's deny rule
        // applies to what a's rule allows.
        let acl = control(
            r#"{ enabled: true,
                 rules: [ { id: "allow", messages: ["put"], permission: "allow", key_exprs: ["**"] },
                          { id: "deny", messages: ["put"], permission: "deny", key_exprs: ["x/**"] } ],
                 subjects: [ { id: "a", usernames: ["alice"] },
                             { id: "b", usernames: ["alice", "alice"] },
                             { id: "c", cert_common_names: ["client-a"] } ],
                 policies: [ { rules: ["allow"], subjects: ["a", "c"] },
                             { rules: ["deny"], subjects: ["b"] } ] }"#,
        );
        let alice = SubjectQuery {
            username: Some("alice".into()),
            ..SubjectQuery::default()
        };
        assert!(allowed(&acl, &alice, Flow::Ingress, Message::Put, "y/1"));
        let d = decide(&acl, &alice, Flow::Ingress, Message::Put, "x/1");
        assert_eq!(d.permission, Permission::Deny);
        assert!(
            matches!(&d.reason, Reason::Rule { rule, subject, .. } if rule == "deny" && subject == "b"),
            "{d}"
        );
        let d = decide(&acl, &alice, Flow::Egress, Message::Delete, "y/1");
        assert_eq!(
            d.reason,
            Reason::NoRule {
                subjects: vec!["a".into(), "b".into()]
            }
        );
        // A certificate name matches only a transport with that name.
        let cert = SubjectQuery {
            cert_common_name: Some("client-a".into()),
            link_protocol: Some("tls".into()),
            ..SubjectQuery::default()
        };
        assert!(allowed(&acl, &cert, Flow::Ingress, Message::Put, "x/1"));
        let nameless = SubjectQuery {
            link_protocol: Some("tls".into()),
            ..SubjectQuery::default()
        };
        let d = decide(&acl, &nameless, Flow::Ingress, Message::Put, "x/1");
        assert_eq!(d.reason, Reason::NoSubject);
    }

    #[test]
    fn disabled_allows_everything_and_empty_lists_apply_the_default_to_everyone() {
        let acl = control(
            r#"{ enabled: false, rules: [ { id: "r", messages: ["put"], permission: "deny",
                                             key_exprs: ["**"] } ] }"#,
        );
        assert!(allowed(&acl, &on("lo"), Flow::Ingress, Message::Put, "a"));
        let acl = control(r#"{ enabled: true, rules: [], subjects: [], policies: [] }"#);
        let d = decide(&acl, &on("lo"), Flow::Ingress, Message::Put, "a");
        assert_eq!(
            (d.permission, d.reason),
            (Permission::Deny, Reason::NoPolicy)
        );
    }

    #[test]
    fn mistakes_are_refused_naming_the_field() {
        let cases = [
            (r#"{ enabled: true }"#, "access_control"),
            (
                r#"{ enabled: false, rules: [ { bogus: 1 } ] }"#,
                "access_control.rules[0].bogus",
            ),
            (
                r#"{ enabled: true, bogus: 1, rules: [], subjects: [], policies: [] }"#,
                "access_control.bogus",
            ),
            (
                r#"{ enabled: true, subjects: [{ id: "s" }], policies: [{ rules: ["r"], subjects: ["s"] }],
                     rules: [{ id: "r", messages: ["publish"], permission: "allow", key_exprs: ["a"] }] }"#,
                "access_control.rules[0].messages",
            ),
            (
                r#"{ enabled: true, subjects: [{ id: "s" }], policies: [{ rules: ["x"], subjects: ["s"] }],
                     rules: [{ id: "r", messages: ["put"], permission: "allow", key_exprs: ["a"] }] }"#,
                "access_control.policies[0].rules",
            ),
            (
                r#"{ enabled: true, subjects: [{ id: "s", interfaces: [] }], policies: [{ rules: ["r"], subjects: ["s"] }],
                     rules: [{ id: "r", messages: ["put"], permission: "allow", key_exprs: ["a"] }] }"#,
                "access_control.subjects[0].interfaces",
            ),
            (
                r#"{ enabled: true, subjects: [{ id: "s" }, { id: "s" }], policies: [{ rules: ["r"], subjects: ["s"] }],
                     rules: [{ id: "r", messages: ["put"], permission: "allow", key_exprs: ["a"] }] }"#,
                "access_control.subjects",
            ),
            (
                r#"{ enabled: true, subjects: [{ id: "s", link_protocols: ["carrier-pigeon"] }],
                     policies: [{ rules: ["r"], subjects: ["s"] }],
                     rules: [{ id: "r", messages: ["put"], permission: "allow", key_exprs: ["a"] }] }"#,
                "access_control.subjects[0].link_protocols",
            ),
            (
                r#"{ enabled: true, subjects: [{ id: "s" }], policies: [{ rules: ["r"], subjects: ["s"] }],
                     rules: [{ id: "r", messages: ["put"], permission: "maybe", key_exprs: ["a"] }] }"#,
                "access_control.rules[0].permission",
            ),
        ];
        for (text, field) in cases {
            let value: serde_json::Value = json5::from_str(text).unwrap();
            let e = AclConfig::from_value(&value).unwrap_err();
            assert_eq!(e.field, field, "{text}: {e}");
        }
    }
}
