//! Security settings fail closed: a configuration asking for access control,
//! authentication or TLS that weft cannot honour stops weftd before it listens, with a
//! message naming the key.

use std::process::Command;

use weft_testkit::free_port;

/// Runs weftd with `args` on a free port; returns its exit code and what it printed on
/// stderr. It must exit on its own (it is refused before listening).
fn run_weftd(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_weftd"))
        .args(args)
        .args(["--no-multicast-scouting", "-l"])
        .arg(format!("tcp/127.0.0.1:{}", free_port()))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn weftd_refuses_to_start_with_security_settings_it_cannot_honour() {
    let dir = std::env::temp_dir().join(format!("weftd-security-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            r#"{ access_control: { enabled: true, default_permission: "deny",
                 rules: [], subjects: [], policies: [] } }"#,
            "access_control.enabled",
        ),
        (
            r#"{ transport: { auth: { usrpwd: { user: "robot", password: "secret" } } } }"#,
            "transport.auth.usrpwd.",
        ),
        (
            r#"{ transport: { link: { tls: { certificate_revocation_list: "crl.pem" } } } }"#,
            "transport.link.tls.certificate_revocation_list",
        ),
    ];
    for (n, (text, key)) in cases.into_iter().enumerate() {
        let path = dir.join(format!("case{n}.json5"));
        std::fs::write(&path, text).unwrap();
        let (code, stderr) = run_weftd(&["-c", path.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{text}: {stderr}");
        assert!(stderr.contains(key), "{text}: {stderr}");
        assert!(stderr.contains("refuses to run"), "{text}: {stderr}");
    }
    // The same through --cfg.
    let (code, stderr) = run_weftd(&[
        "--cfg",
        "access_control:{enabled:true,rules:[],subjects:[],policies:[]}",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("access_control.enabled"), "{stderr}");
    // A mistake in the section is refused, naming the field, even when disabled.
    let (code, stderr) = run_weftd(&[
        "--cfg",
        "access_control:{enabled:false,rules:[{id:'r',messages:['publish'],permission:'allow',key_exprs:['a']}]}",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("access_control.rules[0].messages"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
