/* Configuration: mode, locators and zid (other Zenoh-Pico keys are accepted and ignored). */
#include <string.h>

#include "../mem/text.h"
#include "olv.h"

static void _z_config_null(_z_config_t *c) { memset(c, 0, sizeof(*c)); }
static bool _z_config_check(const _z_config_t *c) { (void)c; return true; }
static void _z_config_drop(_z_config_t *c) { (void)c; }

_ZP_OWNED_IMPL(config, _z_config_t, _z_config_null, _z_config_check, _z_config_drop)

z_result_t z_config_default(z_owned_config_t *config) {
    _z_config_null(&config->_val);
    return Z_OK;
}
z_result_t z_config_clone(z_owned_config_t *dst, const z_loaned_config_t *src) {
    dst->_val = *src;
    return Z_OK;
}

static int _z_hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

z_result_t zp_config_insert(z_loaned_config_t *config, uint8_t key, const char *value) {
    if (value == NULL) return Z_EINVAL;
    size_t len = _z_strlen(value);
    switch (key) {
        case Z_CONFIG_MODE_KEY:
            if (_z_streq(value, Z_CONFIG_MODE_CLIENT)) {
                config->_mode = 0;
            } else if (_z_streq(value, Z_CONFIG_MODE_PEER)) {
                config->_mode = 1;
            } else {
                return Z_ECONFIG;
            }
            return Z_OK;
#if Z_FEATURE_SCOUTING == 1
        case Z_CONFIG_MULTICAST_SCOUTING_KEY:
            config->_no_scouting = _z_streq(value, "false");
            return Z_OK;
        case Z_CONFIG_SCOUTING_TIMEOUT_KEY: {
            unsigned long ms = 0;
            for (const char *c = value; *c != '\0'; c++) {
                if (*c < '0' || *c > '9' || ms > 100000000ul) return Z_ECONFIG;
                ms = ms * 10u + (unsigned long)(*c - '0');
            }
            config->_scouting_timeout_ms = (uint32_t)ms;
            return Z_OK;
        }
        case Z_CONFIG_MULTICAST_LOCATOR_KEY:
#endif
        case Z_CONFIG_CONNECT_KEY:
        case Z_CONFIG_LISTEN_KEY: {
            char *dst = key == Z_CONFIG_CONNECT_KEY ? config->_connect
                        : key == Z_CONFIG_LISTEN_KEY ? config->_listen
                                                     : config->_scouting;
            if (len >= ZP_LOCATOR_CAPACITY) return Z_ENOSPACE;
            memcpy(dst, value, len + 1);
            return Z_OK;
        }
        case Z_CONFIG_SESSION_ZID_KEY: {
            /* hexadecimal text of the 128-bit id, most significant digit first */
            uint8_t id[16] = {0};
            if (len == 0 || len > 32) return Z_ECONFIG;
            for (size_t i = 0; i < len; i++) {
                int v = _z_hex(value[len - 1 - i]);
                if (v < 0) return Z_ECONFIG;
                id[i / 2] |= (uint8_t)(v << ((i % 2) * 4));
            }
            memcpy(config->_zid, id, 16);
            config->_has_zid = true;
            return Z_OK;
        }
        default:
            return Z_OK;
    }
}

const char *zp_config_get(const z_loaned_config_t *config, uint8_t key) {
    switch (key) {
        case Z_CONFIG_MODE_KEY:
            return config->_mode == 0 ? Z_CONFIG_MODE_CLIENT : Z_CONFIG_MODE_PEER;
        case Z_CONFIG_CONNECT_KEY:
            return config->_connect[0] != '\0' ? config->_connect : NULL;
        case Z_CONFIG_LISTEN_KEY:
            return config->_listen[0] != '\0' ? config->_listen : NULL;
#if Z_FEATURE_SCOUTING == 1
        case Z_CONFIG_MULTICAST_LOCATOR_KEY:
            return config->_scouting[0] != '\0' ? config->_scouting : Z_CONFIG_MULTICAST_LOCATOR_DEFAULT;
        case Z_CONFIG_MULTICAST_SCOUTING_KEY:
            return config->_no_scouting ? "false" : "true";
#endif
        default:
            return NULL;
    }
}
