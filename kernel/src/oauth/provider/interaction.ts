/**
 * The login and consent pages of the authorization code flow. oidc-provider sends the browser here with an
 * interaction id (bound to its signed cookie); we ask for the JID and password — or, when the person is
 * signed in already, only for consent — check scopes and oauth_access, record the grant, and hand back to
 * oidc-provider, which redirects to the client with the code.
 */
import type Provider from 'oidc-provider';
import type { InteractionDetails } from 'oidc-provider';
import type { AccountService } from '../../accounts/accounts.js';
import type { HttpContext } from '@service/plugin-api';
import type { Logger } from '../../log/logger.js';
import { tokenRefusal } from '../eligibility.js';
import { InvalidScope, splitScopes } from '../scopes.js';
import type { OAuthService } from '../service.js';
import type { CsrfTokens } from '../endpoints/csrf.js';
import { authorizationPage, errorPage, redirectHeaders } from '../endpoints/pages.js';
import { formParams } from '../endpoints/params.js';
import { refusedLoginStatus, type ResourceOwnerLogin } from '../endpoints/resource-owner.js';
import { OAuthError } from '../endpoints/oauth-error.js';

export class Interactions {
  constructor(
    private readonly oauth: () => OAuthService,
    private readonly csrf: CsrfTokens,
    private readonly owners: ResourceOwnerLogin,
    private readonly accounts: AccountService,
    private readonly logger: Logger,
  ) {}

  async handle(ctx: HttpContext, provider: Provider, uid: string): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'POST') {
      ctx.set('Allow', 'GET, POST');
      return errorPage(ctx, 405, 'invalid_request', `${ctx.method} is not served here`);
    }
    let details: InteractionDetails;
    try {
      details = await provider.interactionDetails(ctx.req, ctx.res);
    } catch {
      return errorPage(ctx, 400, 'invalid_request', 'this authorization has expired or was started in another browser: go back to the application and start again');
    }
    if (details.uid !== uid) return errorPage(ctx, 400, 'invalid_request', 'this page does not belong to the authorization in progress');
    const finish = async (result: Record<string, unknown>) => {
      const target = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
      redirectHeaders(ctx);
      ctx.redirect(target);
    };
    const oauth = this.oauth();
    const clientId = String(details.params.client_id ?? '');
    let scopes: string[];
    try {
      scopes = oauth.checkScopes(splitScopes(String(details.params.scope ?? '')));
    } catch (err) {
      if (err instanceof InvalidScope) return finish({ error: 'invalid_scope', error_description: err.message });
      throw err;
    }
    const client = await oauth.clients.get(clientId);
    const signedInAs = details.prompt.name === 'login' ? undefined : details.session?.accountId;
    const show = (status: number, error?: string, username?: string) =>
      authorizationPage(ctx, status, {
        action: `${ctx.state.mount.replace(/\/$/, '')}/interaction/${encodeURIComponent(uid)}`,
        application: client?.clientName ?? clientId,
        scopes: scopes.map((scope) => ({ scope, description: oauth.describeScope(scope) })),
        hidden: [['csrf_token', this.csrf.issue([uid])]],
        signedInAs,
        username,
        error,
        redirectUri: client?.redirectUri,
      });
    if (ctx.method === 'GET') return show(200);

    let params;
    try {
      params = await formParams(ctx);
    } catch (err) {
      if (err instanceof OAuthError) return show(err.status, err.description);
      throw err;
    }
    // Always our form here: the interaction is bound to a browser by oidc-provider's cookie, never posted by a script.
    const refusal = this.csrf.check(ctx.req.headers, params.get('csrf_token'), [uid], { formRequired: true });
    if (refusal) return show(403, refusal, params.get('username'));
    if (params.has('deny')) return finish({ error: 'access_denied', error_description: 'the person refused the authorization' });

    let accountId: string;
    if (signedInAs) {
      // Consent only: the account was checked when /authorize used the session; check again, as a ban or an
      // oauth_access change may have come while the page was open.
      const at = signedInAs.lastIndexOf('@');
      const account = { user: signedInAs.slice(0, at), host: signedInAs.slice(at + 1) };
      const refusal = await tokenRefusal(this.accounts, oauth, account, { ip: ctx.state.ip });
      if (refusal) return finish({ error: 'access_denied', error_description: refusal.message });
      accountId = signedInAs;
    } else {
      const outcome = await this.owners.login(params.get('username') ?? '', params.get('password') ?? '', ctx.state.ip);
      if (!outcome.ok) {
        if (outcome.reason === 'denied') return finish({ error: 'access_denied', error_description: outcome.message });
        if (outcome.retryAfter !== undefined) ctx.set('Retry-After', String(outcome.retryAfter));
        return show(refusedLoginStatus(outcome.reason), outcome.message, params.get('username'));
      }
      accountId = `${outcome.account.user}@${outcome.account.host}`;
    }
    // The session's earlier grant for this client, when it is this account's (after a new login as someone
    // else it is not, and oidc-provider would refuse the mismatch).
    const previous = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    const existing = previous?.accountId === accountId && previous.clientId === clientId ? previous : undefined;
    const grant = existing ?? new provider.Grant({ accountId, clientId });
    grant.addOIDCScope(scopes.join(' '));
    const grantId = await grant.save();
    this.logger.info({ client: clientId, account: accountId, scopes }, 'OAuth authorization granted (code flow)');
    await finish({ login: { accountId }, consent: { grantId } });
  }
}
