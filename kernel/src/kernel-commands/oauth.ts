/**
 * OAuth commands that are always present: oauth_issue_token (v0 and v1), oauth_list_tokens,
 * oauth_revoke_token, oauth_add_client_implicit, oauth_add_client_password, oauth_remove_client.
 */
import { InvalidJid, parseJid } from '@service/plugin-api';
import { badArgument, failed, notFound } from '@service/plugin-api';
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import type { KernelServices } from '../modules/services.js';
import { tokenRefusal } from '../oauth/eligibility.js';
import { InvalidScope, splitScopes } from '../oauth/scopes.js';
import type { OAuthService } from '../oauth/service.js';

const jid = { name: 'jid', type: 'string', desc: 'Jid for which issue token', example: 'user@server.com' } as const;
const ttl = { name: 'ttl', type: 'integer', desc: 'Time to live of generated token in seconds (capped by oauth_expire)', example: 3600 } as const;
const clientId = { name: 'client_id', type: 'string', desc: 'Client ID', example: 'client-id' } as const;
const clientName = { name: 'client_name', type: 'string', desc: 'Client name', example: 'Client Name' } as const;

export const oauthCommands = [
  defineCommand({
    name: 'oauth_issue_token',
    tags: ['oauth'],
    desc: 'Issue an OAuth token for the given jid',
    longdesc: 'API version 0: scopes as one string, separated by `;` (before 24.02).',
    version: 0,
    args: [jid, ttl, { name: 'scopes', type: 'string', desc: 'List of scopes to allow, separated by ;', example: 'sasl_auth;get_roster' }],
    result: { name: 'result', type: { object: [{ name: 'token', type: 'string' }, { name: 'scopes', type: 'string' }, { name: 'expires_in', type: 'string' }] } },
    examples: [{ args: { jid: 'user@server.com', ttl: 3600, scopes: 'sasl_auth;get_roster' }, result: { token: 'rBP2oIbq_8ar3kx2L7cfhG5nWkuwKcI-jFn4Bfxb_cE', scopes: 'sasl_auth;get_roster', expires_in: '3600' } }],
  }),
  defineCommand({
    name: 'oauth_issue_token',
    tags: ['oauth', 'v1'],
    desc: 'Issue an OAuth token for the given jid',
    longdesc:
      'The account must exist (404), and may neither be banned nor refused by `oauth_access` (422, naming the reason), as on every other way to a token. ' +
      'Every scope must be valid: sasl_auth, service:admin, service:user, a scope a module declares, or the name of a loaded command that is not for the command line only — ' +
      'anything else (a command of a module that is not enabled, `help`, a typo) is refused with `invalid_scope`. A scope given twice is granted once. The lifetime is `ttl`, capped by `oauth_expire`. ' +
      'The token itself is shown only here; the server keeps only its hash.',
    note: 'updated in 24.02',
    version: 1,
    args: [jid, ttl, { name: 'scopes', type: { list: 'string', item: 'scope' }, desc: 'List of scopes to allow', example: ['sasl_auth', 'get_roster'] }],
    result: {
      name: 'result',
      type: { object: [{ name: 'token', type: 'string' }, { name: 'scopes', type: { list: 'string', item: 'scope' } }, { name: 'expires_in', type: 'string' }] },
      desc: 'The token, the scopes granted and the lifetime in seconds',
    },
    examples: [{ args: { jid: 'user@server.com', ttl: 3600, scopes: ['sasl_auth', 'get_roster'] }, result: { token: 'rBP2oIbq_8ar3kx2L7cfhG5nWkuwKcI-jFn4Bfxb_cE', scopes: ['sasl_auth', 'get_roster'], expires_in: '3600' } }],
  }),
  defineCommand({
    name: 'oauth_list_tokens',
    tags: ['oauth'],
    desc: 'List OAuth tokens, user, scope, and seconds to expire (only Mnesia)',
    longdesc:
      'Works with every token store. The server keeps only a hash of each token, so `token` here is the token\'s public id: not a credential, but accepted by oauth_revoke_token. ' +
      '`expires_in` is the number of seconds left. Tokens of every flow are listed: access tokens, refresh tokens, and client-credentials tokens (which belong to no account: `user` is empty).',
    args: [],
    result: {
      name: 'tokens',
      type: { list: { object: [{ name: 'token', type: 'string' }, { name: 'user', type: 'string' }, { name: 'scope', type: 'string' }, { name: 'expires_in', type: 'string' }] }, item: 'token' },
    },
    examples: [{ args: {}, result: [{ token: 'a1B2c3D4e5F6g7H8', user: 'user@server.com', scope: 'sasl_auth get_roster', expires_in: '3594' }] }],
  }),
  defineCommand({
    name: 'oauth_revoke_token',
    tags: ['oauth'],
    desc: 'Revoke authorization for an OAuth token',
    longdesc: 'Takes the token or its public id (as oauth_list_tokens shows it). Effective at once, also where token look-ups are cached. Fails with 404 when there is no such token.',
    note: 'changed in 22.05',
    args: [{ name: 'token', type: 'string', desc: 'The token, or its id from oauth_list_tokens', example: 'a1B2c3D4e5F6g7H8' }],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { token: 'a1B2c3D4e5F6g7H8' }, result: 'Token revoked' }],
  }),
  defineCommand({
    name: 'oauth_add_client_implicit',
    tags: ['oauth'],
    desc: 'Add OAuth client_id with implicit grant type',
    longdesc:
      'The authorization endpoint then delivers tokens and codes for this client only to exactly this redirect URI. ' +
      'It must be absolute, without fragment: `https:` or `http:` to a host name or IP address, or a native application\'s private-use scheme named after a domain (`com.example.app:/cb`, RFC 8252). ' +
      'Any other scheme (`javascript:`, `data:`, `vbscript:`, `file:`, `myapp:`…) is refused with 400 naming `redirect_uri`. ' +
      'A client_id that begins or ends with a space is refused; client ids are compared exactly.',
    args: [clientId, clientName, { name: 'redirect_uri', type: 'string', desc: 'Redirect URI', example: 'https://example.com/oauth-callback' }],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { client_id: 'client-id', client_name: 'Client Name', redirect_uri: 'https://example.com/oauth-callback' }, result: 'OAuth client client-id added' }],
  }),
  defineCommand({
    name: 'oauth_add_client_password',
    tags: ['oauth'],
    desc: 'Add OAuth client_id with password grant type',
    longdesc: 'The secret is stored as a scrypt hash; the token endpoint checks it (HTTP Basic or the client_secret field).',
    args: [clientId, clientName, { name: 'secret', type: 'string', desc: 'Client secret', example: 'SecreTPass' }],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { client_id: 'client-id', client_name: 'Client Name', secret: 'SecreTPass' }, result: 'OAuth client client-id added' }],
  }),
  defineCommand({
    name: 'oauth_remove_client',
    tags: ['oauth'],
    desc: 'Remove OAuth client_id',
    longdesc:
      'Also revokes every token issued to that client, and its outstanding authorization codes and grants, so a client registered again under the same id cannot redeem them. ' +
      'Fails with 404 when there is no such client.',
    args: [clientId],
    result: { name: 'res', type: 'restuple' },
    examples: [{ args: { client_id: 'client-id' }, result: 'OAuth client client-id removed' }],
  }),
] as const;

export function oauthHandlers(services: KernelServices, oauth: () => OAuthService): HandlersFor<typeof oauthCommands> {
  const issue = async (jidText: string, ttlSeconds: number, scopes: string[]) => {
    let parsed;
    try {
      parsed = parseJid(jidText);
    } catch (err) {
      if (err instanceof InvalidJid) throw badArgument('jid', `'${jidText}' is not a valid JID: ${err.message}`);
      throw err;
    }
    if (!parsed.user) throw badArgument('jid', `'${jidText}' is a server, not an account`);
    // A host not served is a 400 naming the argument, an account that does not exist a 404.
    const account = await services.accounts.existing(parsed.user, parsed.host);
    // The same test as every other issuance (ejabberd applies oauth_access here too): an account that may not
    // log in (banned) or that oauth_access refuses gets no token, which would be a way around either.
    const refusal = await tokenRefusal(services.accounts, oauth(), account);
    if (refusal) throw failed(`no token for ${account.user}@${account.host}: ${refusal.message}`);
    let checked: string[];
    try {
      checked = oauth().checkScopes(scopes);
    } catch (err) {
      if (err instanceof InvalidScope) throw badArgument('scopes', err.message);
      throw err;
    }
    return oauth().tokens.issue({ account, scopes: checked, ttl: ttlSeconds });
  };
  return {
    'oauth_issue_token@v0': async ({ jid: j, ttl: t, scopes }: { jid: string; ttl: number; scopes: string }) => {
      const issued = await issue(j, t, scopes.split(/[;\s]+/).filter(Boolean));
      return { token: issued.token, scopes: issued.scopes.join(';'), expires_in: String(issued.expiresIn) };
    },
    'oauth_issue_token@v1': async ({ jid: j, ttl: t, scopes }: { jid: string; ttl: number; scopes: string[] }) => {
      const issued = await issue(j, t, scopes.flatMap(splitScopes));
      return { token: issued.token, scopes: [...issued.scopes], expires_in: String(issued.expiresIn) };
    },
    oauth_list_tokens: async () => {
      const now = Date.now();
      return (await oauth().tokens.list(now))
        .map((t) => ({
          token: t.id,
          user: t.account ? `${t.account.user}@${t.account.host}` : '',
          scope: t.scopes.join(' '),
          expires_in: String(Math.max(0, Math.round((t.expiresAt - now) / 1000))),
        }));
    },
    oauth_revoke_token: async ({ token }: { token: string }) => {
      if (!(await oauth().tokens.revoke(token))) throw notFound('no such token (give the token or its id from oauth_list_tokens)');
      return 'Token revoked';
    },
    oauth_add_client_implicit: async ({ client_id, client_name, redirect_uri }: { client_id: string; client_name: string; redirect_uri: string }) => {
      await oauth().clients.addImplicit(client_id, client_name, redirect_uri);
      return `OAuth client ${client_id} added`;
    },
    oauth_add_client_password: async ({ client_id, client_name, secret }: { client_id: string; client_name: string; secret: string }) => {
      await oauth().clients.addPassword(client_id, client_name, secret);
      return `OAuth client ${client_id} added`;
    },
    oauth_remove_client: async ({ client_id }: { client_id: string }) => {
      await oauth().removeClient(client_id);
      return `OAuth client ${client_id} removed`;
    },
  } as unknown as HandlersFor<typeof oauthCommands>;
}
