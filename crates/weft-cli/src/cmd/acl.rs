//! `weft acl check`: how a configuration's access control decides one message, and why.

use std::process::ExitCode;

use weft::acl::{AccessControl, AclConfig, Flow, Message, SubjectQuery};
use weft::ZenohId;

/// `weft acl` subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum AclCommand {
    /// Decide one message with a configuration's `access_control` and say why.
    ///
    /// Prints `allow` or `deny` with the rule, subject and policy that decided (or why the
    /// default permission applied). Warns (on standard error) of each deny rule that a
    /// message on a key expression intersecting the rule's gets around (Zenoh's
    /// semantics; `access_control.deny_intersecting: true` denies those). Exit status 0
    /// when allowed, 1 when denied, 2 when the configuration or the arguments are wrong.
    ///
    /// Example: weft acl check -c router.json5 --message put --key demo/a --flow ingress
    /// --interface lo --link-protocol tcp
    Check(CheckArgs),
}

/// Arguments of `weft acl check`.
#[derive(clap::Args, Debug)]
pub(crate) struct CheckArgs {
    /// The configuration file (JSON5, Zenoh's keys) holding `access_control`.
    #[arg(short, long, value_name = "FILE")]
    config: String,
    /// The message: put, delete, declare_subscriber, query, declare_queryable, reply,
    /// liveliness_token, declare_liveliness_subscriber or liveliness_query.
    #[arg(long, value_parser = parse_message)]
    message: Message,
    /// Its key expression.
    #[arg(short, long)]
    key: String,
    /// Whether the node receives it (ingress) or sends it (egress).
    #[arg(long, value_parser = parse_flow)]
    flow: Flow,
    /// The network interface of the link (e.g. lo, eth0).
    #[arg(long)]
    interface: Option<String>,
    /// The common name of the peer's TLS certificate.
    #[arg(long)]
    cert_common_name: Option<String>,
    /// The user name the peer authenticated with.
    #[arg(long)]
    username: Option<String>,
    /// The link protocol (tcp, udp, tls, quic, unixsock-stream, ...).
    #[arg(long)]
    link_protocol: Option<String>,
    /// The peer's ZenohID.
    #[arg(long)]
    zid: Option<ZenohId>,
}

fn parse_message(s: &str) -> Result<Message, String> {
    Message::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Message::ALL.iter().map(|m| m.name()).collect();
        format!("unknown message {s:?} (one of {})", names.join(", "))
    })
}

fn parse_flow(s: &str) -> Result<Flow, String> {
    Flow::from_name(s).ok_or_else(|| format!("unknown flow {s:?} (ingress or egress)"))
}

/// Runs `weft acl`.
pub(crate) fn run(command: &AclCommand) -> ExitCode {
    match command {
        AclCommand::Check(args) => check(args),
    }
}

fn check(args: &CheckArgs) -> ExitCode {
    let fail = |e: String| {
        eprintln!("weft acl check: {e}");
        ExitCode::from(2)
    };
    let text = match std::fs::read_to_string(&args.config) {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot read {}: {e}", args.config)),
    };
    let root: serde_json::Value = match json5::from_str(&text) {
        Ok(v) => v,
        Err(e) => return fail(format!("{} is not valid JSON5: {e}", args.config)),
    };
    let config = match root.get("access_control") {
        None => AclConfig::default(),
        Some(section) => match AclConfig::from_value(section) {
            Ok(c) => c,
            Err(e) => return fail(e.to_string()),
        },
    };
    let key = match weft_keyexpr::KeyExpr::new(&args.key) {
        Ok(k) => k,
        Err(e) => return fail(format!("--key {:?}: {e}", args.key)),
    };
    let control = AccessControl::new(&config);
    for bypass in control.bypasses() {
        eprintln!("weft acl check: warning: {bypass}");
    }
    let subject = SubjectQuery {
        interface: args.interface.clone(),
        cert_common_name: args.cert_common_name.clone(),
        username: args.username.clone(),
        link_protocol: args.link_protocol.clone(),
        zid: args.zid,
    };
    let decision = control.decide(&control.subjects_of(&subject), args.flow, args.message, key);
    outln!("{decision}");
    match decision.permission {
        weft::acl::Permission::Allow => ExitCode::SUCCESS,
        weft::acl::Permission::Deny => ExitCode::from(1),
    }
}
