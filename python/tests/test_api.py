"""The values of the API, without a network: key expressions, encodings, bytes,
configurations, enumerations, errors."""

import pytest

import weft


def test_key_expressions_relate_and_combine():
    k = weft.KeyExpr("robot/a")
    assert str(k) == "robot/a" and k == "robot/a"
    assert weft.KeyExpr("robot/*").intersects(k)
    assert weft.KeyExpr("robot/**").includes("robot/a/b")
    assert not k.includes("robot/*")
    assert str(k.join("pose/x")) == "robot/a/pose/x"
    assert str(k.concat("bc")) == "robot/abc"
    assert str(weft.KeyExpr.autocanonize("a/**/**")) == "a/**"
    with pytest.raises(weft.ZError, match="a//b"):
        weft.KeyExpr("a//b")


def test_encodings_are_text_with_constants():
    assert str(weft.Encoding.TEXT_PLAIN) == "text/plain"
    assert weft.Encoding("application/json") == weft.Encoding.APPLICATION_JSON
    assert weft.Encoding.APPLICATION_JSON == "application/json"
    assert str(weft.Encoding.TEXT_PLAIN.with_schema("utf8")) == "text/plain;utf8"
    assert str(weft.Encoding()) == "zenoh/bytes"
    assert hash(weft.Encoding("text/plain")) == hash(weft.Encoding.TEXT_PLAIN)


def test_zbytes_hold_bytes_and_text():
    z = weft.ZBytes("héllo")
    assert z.to_bytes() == "héllo".encode()
    assert bytes(z) == z.to_bytes() and z.to_string() == "héllo" and str(z) == "héllo"
    assert len(weft.ZBytes(bytearray(b"ab"))) == 2 and not weft.ZBytes(b"")
    assert weft.ZBytes(b"x") == b"x"
    with pytest.raises(ValueError):
        weft.ZBytes(b"\xff").to_string()
    with pytest.raises(TypeError):
        weft.ZBytes(3)


def test_config_is_checked_at_every_change(tmp_path):
    c = weft.Config()
    c.insert_json5("mode", '"client"')
    c.insert_json5("connect/endpoints", '["tcp/127.0.0.1:7447"]')
    assert c.get_json("mode") == '"client"'
    assert c.get_json("listen") == "null"
    with pytest.raises(weft.ZError):
        c.insert_json5("mode", '"bogus"')
    assert c.get_json("mode") == '"client"', "a refused change leaves the config as it was"
    with pytest.raises(weft.ZError):
        weft.Config.from_json5("{")
    with pytest.raises(weft.ZError):
        weft.Config.from_file(tmp_path / "missing.json5")
    path = tmp_path / "c.json5"
    path.write_text("{ mode: 'peer', /* a comment */ }")
    assert weft.Config.from_file(path).get_json("mode") == '"peer"'
    assert weft.Config.from_json5("{mode: 'router'}").get_json("mode") == '"router"'


def test_enumerations_have_zenoh_names_and_defaults():
    assert weft.Priority.DEFAULT == weft.Priority.DATA
    assert weft.Priority.MAX == weft.Priority.REAL_TIME
    assert weft.Priority.MIN == weft.Priority.BACKGROUND
    assert int(weft.Priority.DATA) == 5
    assert weft.CongestionControl.DEFAULT == weft.CongestionControl.DROP
    assert weft.QueryTarget.DEFAULT == weft.QueryTarget.BEST_MATCHING
    assert weft.ConsolidationMode.DEFAULT == weft.ConsolidationMode.AUTO
    assert weft.Reliability.DEFAULT == weft.Reliability.RELIABLE
    assert repr(weft.SampleKind.DELETE) == "SampleKind.DELETE"


def test_opening_an_unreachable_router_raises_zerror():
    c = weft.Config()
    c.insert_json5("mode", '"client"')
    c.insert_json5("connect/endpoints", '["tcp/127.0.0.1:1"]')
    c.insert_json5("scouting/multicast/enabled", "false")
    with pytest.raises(weft.ZError, match="127.0.0.1:1"):
        weft.open(c)


def test_handlers_module_names():
    from weft.handlers import Callback, DefaultHandler, FifoChannel, RingChannel

    cb = Callback(print, None)
    assert cb.callback is print and cb.drop is None
    assert DefaultHandler() and FifoChannel(3) and RingChannel(3)
