/** A configuration for OAuth tests: tokens for every account, admin and user api_permissions with oauth clauses. */
import { baseConfig, type RawConfig } from './server.js';

export function oauthConfig(): RawConfig {
  const config = baseConfig();
  config.oauth_expire = 3600;
  config.oauth_access = 'all';
  config.api_permissions = {
    'public commands': { who: { acl: 'loopback' }, what: ['status'] },
    'admin access': { who: [{ acl: 'admin' }, { oauth: { scope: 'service:admin', acl: 'admin' } }], what: '*' },
    'user access': { who: { oauth: { scope: ['service:user', 'user_resources', 'kick_user'] } }, what: ['user_resources', 'kick_user', 'status'] },
  };
  return config;
}
