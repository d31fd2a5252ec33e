//! `Encoding`: how a payload is to be read (`text/plain`, `application/json`, ...).

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::PyString;

/// A payload's encoding, as its MIME-like text, optionally followed by `;schema`.
/// Compares equal to its text.
#[pyclass(frozen, module = "weft")]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Encoding(pub(crate) Cow<'static, str>);

/// Defines `Encoding`'s methods and its predefined encodings (class attributes).
macro_rules! predefined {
    ({ $($methods:tt)* } $($name:ident = $text:literal),* $(,)?) => {
        #[pymethods]
        impl Encoding {
            $($methods)*
            $(
                #[doc = concat!("`", $text, "`.")]
                #[classattr]
                const $name: Self = Self(Cow::Borrowed($text));
            )*
        }
    };
}

predefined! {
    {
    /// The encoding written as `text` (`zenoh/bytes` when omitted).
    #[new]
    #[pyo3(signature = (encoding = None))]
    fn new(encoding: Option<String>) -> Self {
        encoding.map_or(Self::ZENOH_BYTES, |e| Self(Cow::Owned(e)))
    }

    /// This encoding with `schema` (replacing any schema it had).
    fn with_schema(&self, schema: &str) -> Self {
        let base = self.0.split_once(';').map_or(&*self.0, |(b, _)| b);
        Self(Cow::Owned(format!("{base};{schema}")))
    }

    fn __str__(&self) -> &str {
        &self.0
    }

    fn __repr__(&self) -> String {
        format!("Encoding({:?})", &*self.0)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(e) = other.downcast::<Self>() {
            return e.get().0 == self.0;
        }
        other
            .downcast::<PyString>()
            .ok()
            .and_then(|s| s.to_cow().ok().map(|s| s == self.0))
            .unwrap_or(false)
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.0.hash(&mut h);
        h.finish()
    }
    }
    ZENOH_BYTES = "zenoh/bytes",
    ZENOH_STRING = "zenoh/string",
    ZENOH_SERIALIZED = "zenoh/serialized",
    APPLICATION_OCTET_STREAM = "application/octet-stream",
    TEXT_PLAIN = "text/plain",
    APPLICATION_JSON = "application/json",
    TEXT_JSON = "text/json",
    APPLICATION_CDR = "application/cdr",
    APPLICATION_CBOR = "application/cbor",
    APPLICATION_YAML = "application/yaml",
    TEXT_YAML = "text/yaml",
    TEXT_JSON5 = "text/json5",
    APPLICATION_PYTHON_SERIALIZED_OBJECT = "application/python-serialized-object",
    APPLICATION_PROTOBUF = "application/protobuf",
    APPLICATION_JAVA_SERIALIZED_OBJECT = "application/java-serialized-object",
    APPLICATION_OPENMETRICS_TEXT = "application/openmetrics-text",
    IMAGE_PNG = "image/png",
    IMAGE_JPEG = "image/jpeg",
    IMAGE_GIF = "image/gif",
    IMAGE_BMP = "image/bmp",
    IMAGE_WEBP = "image/webp",
    APPLICATION_XML = "application/xml",
    APPLICATION_X_WWW_FORM_URLENCODED = "application/x-www-form-urlencoded",
    TEXT_HTML = "text/html",
    TEXT_XML = "text/xml",
    TEXT_CSS = "text/css",
    TEXT_JAVASCRIPT = "text/javascript",
    TEXT_MARKDOWN = "text/markdown",
    TEXT_CSV = "text/csv",
    APPLICATION_SQL = "application/sql",
    APPLICATION_COAP_PAYLOAD = "application/coap-payload",
    APPLICATION_JSON_PATCH_JSON = "application/json-patch+json",
    APPLICATION_JSON_SEQ = "application/json-seq",
    APPLICATION_JSONPATH = "application/jsonpath",
    APPLICATION_JWT = "application/jwt",
    APPLICATION_MP4 = "application/mp4",
    APPLICATION_SOAP_XML = "application/soap+xml",
    APPLICATION_YANG = "application/yang",
    AUDIO_AAC = "audio/aac",
    AUDIO_FLAC = "audio/flac",
    AUDIO_MP4 = "audio/mp4",
    AUDIO_OGG = "audio/ogg",
    AUDIO_VORBIS = "audio/vorbis",
    VIDEO_H261 = "video/h261",
    VIDEO_H263 = "video/h263",
    VIDEO_H264 = "video/h264",
    VIDEO_H265 = "video/h265",
    VIDEO_H266 = "video/h266",
    VIDEO_MP4 = "video/mp4",
    VIDEO_OGG = "video/ogg",
    VIDEO_RAW = "video/raw",
    VIDEO_VP8 = "video/vp8",
    VIDEO_VP9 = "video/vp9",
}

/// The text of an encoding given as `Encoding` or `str`; empty (weft's default) for
/// `None`.
pub(crate) fn encoding_text(obj: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    match obj {
        None => Ok(String::new()),
        Some(o) if o.is_none() => Ok(String::new()),
        Some(o) => match o.downcast::<Encoding>() {
            Ok(e) => Ok(e.get().0.to_string()),
            Err(_) => o.extract::<String>(),
        },
    }
}
