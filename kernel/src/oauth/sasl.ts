/**
 * SASL with OAuth tokens: X-OAUTH2 (NUL, user name, NUL, token — the spec's form, on by default) and
 * OAUTHBEARER (RFC 7628). The token needs the sasl_auth scope and must belong to the account logging in
 * on this vhost; an authorization identity other than the token's owner is refused — there is no acting
 * as someone else with a token.
 *
 * Every failure is <not-authorized/> with a <text/> naming the problem, also for a message that cannot be
 * read, where RFC 6120 has malformed-request and incorrect-encoding: the requirement gives these
 * mechanisms one failure condition. In OAUTHBEARER, a message that can be read but does not log in gets
 * RFC 7628's JSON error challenge first (§3.2.2), and fails once the client has answered it (§3.2.3).
 */
import { nameprep, nodeprep } from '@service/plugin-api';
import { SaslFailure, type SaslMechanism } from '@service/plugin-api';
import { parseOAuthBearerMessage } from './oauthbearer-message.js';
import type { OAuthService } from './service.js';

/** Why a token does not log this client in: RFC 6750's error code, the scope it lacks, and a text for <failure/>. */
interface Refusal {
  readonly status: 'invalid_token' | 'insufficient_scope';
  readonly scope?: string;
  readonly text: string;
}

const refuse = (text: string) => new SaslFailure('not-authorized', text);

/**
 * A client's words inside our <text/>: JSON quoting turns control characters (not allowed in XML) into
 * escapes, and the length is capped; U+FFFE and U+FFFF, also not XML characters, survive JSON quoting.
 */
const quoted = (text: string) => JSON.stringify(text.slice(0, 100)).replace(/[\uFFFE\uFFFF]/g, '\uFFFD');

async function judgeToken(oauth: OAuthService, token: string, host: string): Promise<{ user: string } | Refusal> {
  const record = await oauth.tokens.verify(token);
  if (!record || record.kind !== 'access' || !record.account || record.account.host !== host) {
    return { status: 'invalid_token', scope: 'sasl_auth', text: 'the token is unknown, expired or revoked, or not an account token of this host' };
  }
  // RFC 6750 §3.1: a valid token without the rights asked for is insufficient_scope, naming the scope needed.
  if (!record.scopes.includes('sasl_auth')) return { status: 'insufficient_scope', scope: 'sasl_auth', text: 'the token lacks the sasl_auth scope' };
  return { user: record.account.user };
}

/** Whether `text` names the account `user@host`: its user name or its bare JID, in any spelling that prepares to it. */
function namesAccount(text: string, user: string, host: string): boolean {
  const at = text.lastIndexOf('@');
  try {
    if (at === -1) return nodeprep(text) === user;
    return nodeprep(text.slice(0, at)) === user && nameprep(text.slice(at + 1)) === host;
  } catch {
    return false;
  }
}

/** authzid, when given, must be the owner: its bare JID or just its user name. */
function sameIdentity(authzid: string, user: string, host: string): boolean {
  return authzid === '' || namesAccount(authzid, user, host);
}

/** Acting as someone else needs rights no token has: like a missing scope, not like a bad token (which a client would replace). */
const otherIdentity = (authzid: string): Refusal => ({ status: 'insufficient_scope', text: `this token may not act as ${quoted(authzid)}` });

export function xOAuth2Mechanism(oauth: () => OAuthService): SaslMechanism {
  return {
    name: 'X-OAUTH2',
    encodingFailure: 'not-authorized',
    offered: () => true,
    start: (peer) => ({
      async step(response) {
        const parts = response.toString('utf8').split('\0');
        if (parts.length !== 3) throw refuse('expected NUL, user name, NUL, token');
        const [authzid, name, token] = parts as [string, string, string];
        const verdict = await judgeToken(oauth(), token, peer.host);
        if ('status' in verdict) throw refuse(verdict.text);
        const { user } = verdict;
        if (!namesAccount(name, user, peer.host)) throw refuse(`the token does not belong to ${quoted(name)}`);
        if (!sameIdentity(authzid, user, peer.host)) throw refuse(otherIdentity(authzid).text);
        return { success: { user } };
      },
    }),
  };
}

const KVSEP = Buffer.from('\x01');

export function oauthBearerMechanism(oauth: () => OAuthService): SaslMechanism {
  return {
    name: 'OAUTHBEARER',
    encodingFailure: 'not-authorized',
    offered: () => true,
    start: (peer) => {
      // Set when the error challenge has gone out: what the failure that ends the exchange says.
      let refused: string | undefined;
      const challenge = (refusal: Refusal) => {
        refused = refusal.text;
        return { challenge: Buffer.from(JSON.stringify({ status: refusal.status, ...(refusal.scope ? { scope: refusal.scope } : {}) })) };
      };
      return {
        async step(response) {
          if (refused !== undefined) {
            // §3.2.3: the client answers the error challenge with a lone %x01, and the exchange fails.
            // Any other answer fails it too; the text then says the answer was not the expected one.
            throw refuse(response.equals(KVSEP) ? refused : `${refused}; the answer to the error challenge was not %x01`);
          }
          const message = parseOAuthBearerMessage(response);
          // A message that cannot be read has no token to report on: it fails at once, without a challenge.
          if ('problem' in message) throw refuse(`malformed OAUTHBEARER message: ${message.problem}`);
          const verdict = await judgeToken(oauth(), message.token, peer.host);
          if ('status' in verdict) return challenge(verdict);
          if (!sameIdentity(message.authzid, verdict.user, peer.host)) return challenge(otherIdentity(message.authzid));
          return { success: { user: verdict.user } };
        },
      };
    },
  };
}
