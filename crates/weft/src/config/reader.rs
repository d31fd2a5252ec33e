//! Sets a [`Config`] from the key tree (`config::schema`), whose values are already
//! checked: each key the tree declares with a kind is read here, once, for this node's
//! mode.

use weft_proto::core::WhatAmI;

use super::setting::{OrNull, Setting};
use super::{schema, values, Config, ConfigError};
use crate::link::tls::PemSource;

impl Config {
    /// Sets what the key tree `tree` gives (its values already checked).
    pub(super) fn read(&mut self, tree: &schema::Root) -> Result<(), ConfigError> {
        let mode = self.mode;
        if let Some(id) = tree.id.get(mode) {
            self.id = Some(id.0);
        }
        let connect = &tree.connect;
        if let Some(e) = connect.endpoints.get(mode) {
            self.connect.clone_from(&e.0);
        }
        if let Some(t) = connect.timeout_ms.get(mode).and_then(|t| t.0.as_ref()) {
            self.connect_timeout_ms = Some(t.0);
        }
        if let Some(f) = connect.exit_on_failure.get(mode).and_then(|f| f.0.as_ref()) {
            self.connect_exit_on_failure = Some(f.0);
        }
        if let Some(e) = tree.listen.endpoints.get(mode) {
            self.listen.clone_from(&e.0);
        }
        self.read_scouting(&tree.scouting);
        self.read_transport(&tree.transport)?;
        if let Some(t) = tree.queries_default_timeout.get(mode) {
            self.queries_default_timeout = t.0;
        }
        if let Some(f) = tree.timestamping.enabled.get(mode) {
            self.timestamping = Some(f.0);
        }
        self.plugins.clone_from(&tree.plugins);
        self.metadata.clone_from(&tree.metadata);
        if let Some(acl) = &tree.access_control {
            self.access_control = crate::acl::AclConfig::from_value(acl)?;
        }
        let permissions = &tree.adminspace.permissions;
        if let Some(f) = permissions.read.get(mode) {
            self.adminspace_read = f.0;
        }
        if let Some(f) = permissions.write.get(mode) {
            self.adminspace_write = f.0;
        }
        Ok(())
    }

    /// Sets what `scouting.*` gives.
    fn read_scouting(&mut self, s: &schema::Scouting) {
        let mode = self.mode;
        let out = &mut self.scouting;
        if let Some(t) = s.timeout.get(mode) {
            out.timeout = t.0;
        }
        if let Some(t) = s.delay.get(mode) {
            out.delay = t.0;
        }
        let m = &s.multicast;
        if let Some(f) = m.enabled.get(mode) {
            self.multicast_scouting = f.0;
        }
        if let Some(a) = m.address.get(mode) {
            out.address = a.0;
        }
        if let Some(i) = m.interface.get(mode) {
            out.interface.clone_from(&i.0);
        }
        if let Some(t) = m.ttl.get(mode) {
            out.ttl = t.0;
        }
        if let Some(r) = m.autoconnect.get(mode).and_then(|r| r.0.as_ref()) {
            out.autoconnect = Some(r.0);
        }
        if let Some(f) = m.listen.get(mode).and_then(|f| f.0.as_ref()) {
            out.listen = Some(f.0);
        }
        let g = &s.gossip;
        let gossip = &mut out.gossip;
        if let Some(f) = g.enabled.get(mode) {
            gossip.enabled = f.0;
        }
        if let Some(f) = g.multihop.get(mode) {
            gossip.multihop = f.0;
        }
        if let Some(t) = g.target.get(mode).and_then(|t| t.0.as_ref()) {
            gossip.target = Some(t.0);
        }
        if let Some(r) = g.autoconnect.get(mode).and_then(|r| r.0.as_ref()) {
            gossip.autoconnect = Some(r.0);
        }
        if let Some(st) = g
            .autoconnect_strategy
            .get(mode)
            .and_then(|st| st.0.as_ref())
        {
            gossip.strategy = st.0;
        }
    }

    /// Sets what `transport.*` gives (but `transport.auth.usrpwd`).
    fn read_transport(&mut self, t: &schema::Transport) -> Result<(), ConfigError> {
        let mode = self.mode;
        let unicast = &t.unicast;
        if let Some(v) = unicast.open_timeout.get(mode) {
            self.open_timeout = v.0;
        }
        if let Some(v) = unicast.accept_timeout.get(mode) {
            self.accept_timeout = v.0;
        }
        if let Some(v) = unicast.accept_pending.get(mode) {
            self.accept_pending = v.0;
        }
        if let Some(v) = unicast.max_sessions.get(mode) {
            self.max_sessions = v.0;
        }
        if let Some(v) = unicast.qos.enabled.get(mode) {
            self.qos = v.0;
        }
        let multicast = &t.multicast;
        if let Some(v) = multicast.join_interval.get(mode) {
            self.multicast_join_interval = v.0;
        }
        if let Some(v) = multicast.max_sessions.get(mode) {
            self.multicast_max_sessions = v.0;
        }
        if let Some(v) = multicast.qos.enabled.get(mode) {
            self.multicast_qos = v.0;
        }
        // `compression.enabled` is read as `Off`: only false gets this far.
        let _ = multicast.compression.enabled.get(mode);
        let tx = &t.link.tx;
        if let Some(v) = tx.lease.get(mode) {
            self.lease = v.0;
        }
        if let Some(v) = tx.batch_size.get(mode) {
            self.batch_size = v.0;
        }
        if let Some(v) = tx.overflow_budget.get(mode) {
            self.overflow_budget = v.0;
        }
        let cc = &tx.queue.congestion_control;
        if let Some(v) = cc.drop.wait_before_drop.get(mode) {
            self.wait_before_drop = v.0;
        }
        if let Some(v) = cc.block.wait_before_close.get(mode) {
            self.wait_before_close = v.0;
        }
        let rx = &t.link.rx;
        if let Some(v) = rx.max_message_size.get(mode) {
            self.max_message_size = v.0;
        }
        if let Some(v) = rx.reassembly_budget.get(mode) {
            self.reassembly_budget = v.0;
        }
        match (rx.reassembly_share.get(mode), rx.max_message_size.get(mode)) {
            (Some(v), _) => self.reassembly_share = v.0,
            // Who asks for larger messages than the default share gets them.
            (None, Some(max)) => self.reassembly_share = self.reassembly_share.max(max.0),
            (None, None) => {}
        }
        let throttle = &t.auth.throttle;
        if let Some(v) = throttle.failures.get(mode) {
            self.auth_throttle.failures = v.0.as_ref().map_or(0, |n| n.0);
        }
        if let Some(v) = throttle.backoff_ms.get(mode) {
            self.auth_throttle.backoff = v.0;
        }
        if let Some(v) = t.link.tcp.so_sndbuf.get(mode).and_then(|v| v.0.as_ref()) {
            self.tcp_buffers.send = v.0;
        }
        if let Some(v) = t.link.tcp.so_rcvbuf.get(mode).and_then(|v| v.0.as_ref()) {
            self.tcp_buffers.recv = v.0;
        }
        self.read_tls(&t.link.tls)
    }

    /// Sets what `transport.link.tls.*` gives.
    fn read_tls(&mut self, t: &schema::Tls) -> Result<(), ConfigError> {
        let mode = self.mode;
        let out = &mut self.tls;
        let flag =
            |f: &Setting<OrNull<values::Flag>>| f.get(mode).and_then(|f| f.0.as_ref().map(|f| f.0));
        if let Some(f) = flag(&t.enable_mtls) {
            out.enable_mtls = f;
        }
        if let Some(f) = flag(&t.verify_name_on_connect) {
            out.verify_name_on_connect = f;
        }
        if let Some(f) = flag(&t.close_link_on_expiration) {
            out.close_link_on_expiration = f;
        }
        if let Some(v) = t.so_sndbuf.get(mode).and_then(|v| v.0.as_ref()) {
            out.buffers.send = v.0;
        }
        if let Some(v) = t.so_rcvbuf.get(mode).and_then(|v| v.0.as_ref()) {
            out.buffers.recv = v.0;
        }
        let documents = [
            (
                &mut out.root_ca_certificate,
                document(&t.root_ca_certificate, mode),
                document(&t.root_ca_certificate_base64, mode),
                "root_ca_certificate_base64",
            ),
            (
                &mut out.listen_private_key,
                document(&t.listen_private_key, mode),
                document(&t.listen_private_key_base64, mode),
                "listen_private_key_base64",
            ),
            (
                &mut out.listen_certificate,
                document(&t.listen_certificate, mode),
                document(&t.listen_certificate_base64, mode),
                "listen_certificate_base64",
            ),
            (
                &mut out.connect_private_key,
                document(&t.connect_private_key, mode),
                document(&t.connect_private_key_base64, mode),
                "connect_private_key_base64",
            ),
            (
                &mut out.connect_certificate,
                document(&t.connect_certificate, mode),
                document(&t.connect_certificate_base64, mode),
                "connect_certificate_base64",
            ),
        ];
        for (slot, file, base64, base64_key) in documents {
            *slot = match (file, base64) {
                (Some(_), Some(_)) => {
                    return Err(ConfigError::InvalidValue {
                        key: format!("transport.link.tls.{base64_key}"),
                        value: "(secret)".into(),
                        expected: "only one of the file and the _base64 forms of a \
                                   certificate or key"
                            .into(),
                    })
                }
                (file, base64) => file.or(base64),
            };
        }
        Ok(())
    }
}

/// The certificate or key a TLS setting gives a node of `mode`.
fn document<const BASE64: bool, const SECRET: bool>(
    setting: &Setting<OrNull<values::Pem<BASE64, SECRET>>>,
    mode: WhatAmI,
) -> Option<PemSource> {
    setting
        .get(mode)
        .and_then(|d| d.0.as_ref())
        .and_then(|d| d.0.clone())
}
