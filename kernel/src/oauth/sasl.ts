/**
 * SASL with OAuth tokens: X-OAUTH2 (NUL, user name, NUL, token — the spec's form, on by default) and
 * OAUTHBEARER (RFC 7628). The token needs the sasl_auth scope and must belong to the account logging in
 * on this vhost; an authorization identity other than the token's owner is refused — there is no acting
 * as someone else with a token.
 */
import { SaslFailure, type SaslMechanism } from '../xmpp/sasl/mechanism.js';
import type { OAuthService } from './service.js';

async function ownerOf(oauth: OAuthService, token: string, host: string): Promise<string> {
  const record = await oauth.tokens.verify(token);
  if (!record || record.kind !== 'access' || !record.account || record.account.host !== host || !record.scopes.includes('sasl_auth')) {
    throw new SaslFailure('not-authorized');
  }
  return record.account.user;
}

/** authzid, when given, must be the owner: its bare JID or just its user name. */
function sameIdentity(authzid: string, user: string, host: string): boolean {
  const lower = authzid.toLowerCase();
  return lower === '' || lower === user || lower === `${user}@${host}`;
}

export function xOAuth2Mechanism(oauth: () => OAuthService): SaslMechanism {
  return {
    name: 'X-OAUTH2',
    offered: () => true,
    start: (peer) => ({
      async step(response) {
        const parts = response.toString('utf8').split('\0');
        if (parts.length !== 3) throw new SaslFailure('malformed-request', 'expected NUL, user name, NUL, token');
        const [authzid, name, token] = parts as [string, string, string];
        const user = await ownerOf(oauth(), token, peer.host);
        const given = name.toLowerCase();
        if (given !== user && given !== `${user}@${peer.host}`) throw new SaslFailure('not-authorized');
        if (!sameIdentity(authzid, user, peer.host)) throw new SaslFailure('not-authorized', `this token may not act as ${authzid}`);
        return { success: { user } };
      },
    }),
  };
}

export function oauthBearerMechanism(oauth: () => OAuthService): SaslMechanism {
  return {
    name: 'OAUTHBEARER',
    offered: () => true,
    start: (peer) => {
      let failed = false;
      return {
        async step(response) {
          // RFC 7628 §3.2.3: after the error challenge, the client answers with %x01 and the exchange fails.
          if (failed) throw new SaslFailure('not-authorized');
          const text = response.toString('utf8');
          const comma = text.indexOf(',');
          const second = text.indexOf(',', comma + 1);
          if (!text.startsWith('n,') && !text.startsWith('y,')) throw new SaslFailure('malformed-request', 'OAUTHBEARER starts with a GS2 header (n,…)');
          const authzid = text.slice(comma + 1, second).startsWith('a=') ? text.slice(comma + 3, second) : '';
          const pairs = new Map(
            text
              .slice(second + 1)
              .split('\x01')
              .filter(Boolean)
              .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
          );
          const auth = pairs.get('auth') ?? '';
          const token = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
          if (!token) throw new SaslFailure('malformed-request', 'missing auth=Bearer <token>');
          let user: string;
          try {
            user = await ownerOf(oauth(), token, peer.host);
          } catch {
            failed = true;
            return { challenge: Buffer.from(JSON.stringify({ status: 'invalid_token', scope: 'sasl_auth' })) };
          }
          if (!sameIdentity(authzid, user, peer.host)) throw new SaslFailure('not-authorized', `this token may not act as ${authzid}`);
          return { success: { user } };
        },
      };
    },
  };
}
