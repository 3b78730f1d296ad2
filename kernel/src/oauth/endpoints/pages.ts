/**
 * The HTML of the OAuth endpoints: the authorization form (who asks, for what, JID and password, Accept or
 * Deny) and the error page shown when there is nowhere safe to redirect to. Everything interpolated is
 * escaped, in text and in double-quoted attributes alike; the pages load nothing, may not be framed
 * (clickjacking), and their forms lead only here and to the client.
 */
import type { HttpContext } from '@service/plugin-api';
import { noStore } from './oauth-error.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}ul{padding-left:1.2rem}li{margin:.2rem 0}code{background:#f2f2f2;padding:0 .2rem}
label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
.error{background:#fde8e8;border:1px solid #e0a0a0;padding:.6rem;margin:1rem 0}
.actions{margin-top:1.2rem;display:flex;gap:.6rem}button{padding:.5rem 1.2rem}`;

/**
 * The headers of every HTML answer here, pages and redirects alike: never cached (they hold forms, tokens,
 * codes), never framed (clickjacking: X-Frame-Options for browsers that predate frame-ancestors), nothing
 * loaded from anywhere, never sniffed as another type, and no referrer (the URLs carry the request, and a
 * redirect carries a token). `formAction` lists where a form on the page may lead, redirects included:
 * browsers check form-action on every hop of a form submission, so a page whose submission ends at the
 * client lists the client.
 */
function htmlHeaders(ctx: HttpContext, formAction: string): void {
  noStore(ctx);
  ctx.set('Content-Security-Policy', `default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action ${formAction}; frame-ancestors 'none'`);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
}

/** For a redirect answer (to the client, or within the flow). */
export function redirectHeaders(ctx: HttpContext): void {
  htmlHeaders(ctx, "'none'");
}

/**
 * Set before oidc-provider answers on `authorize`: a redirect, an error page (ours, which sets its own), or the
 * page of `response_mode=form_post`, which posts the code to the client with one inline script. oidc-provider
 * adds that script's hash to script-src when the policy has the directive, so it starts empty (nothing
 * runs but that script). form-action is left open there: the form's target is the client's redirect URI.
 */
export function providerPageHeaders(ctx: HttpContext): void {
  noStore(ctx);
  ctx.set('Content-Security-Policy', "default-src 'none'; script-src; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'");
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
}

/**
 * The CSP source that lets a form submission end at `redirectUri`: its origin, or for a native application's
 * private-use scheme the scheme. CSP host sources cannot name an IPv6 address, so a redirect to `[::1]` (a native
 * application's loopback) gets its scheme, `http:`. Undefined when nothing can be written safely into the
 * header (a redirect URI the registration would refuse anyway).
 */
export function formTarget(redirectUri: string | URL | undefined): string | undefined {
  if (redirectUri === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(redirectUri);
  } catch {
    return undefined;
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    if (url.hostname.startsWith('[')) return url.protocol;
    return /^https?:\/\/[a-z0-9_.-]+(:\d+)?$/.test(url.origin) ? url.origin : undefined;
  }
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? url.protocol : undefined;
}

function page(ctx: HttpContext, status: number, title: string, body: string, formAction = "'none'"): void {
  htmlHeaders(ctx, formAction);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>${body}</body></html>\n`;
}

export interface ScopeLine {
  readonly scope: string;
  readonly description: string;
}

export interface AuthorizationForm {
  /** Where the form posts to. */
  readonly action: string;
  readonly application: string;
  readonly scopes: readonly ScopeLine[];
  /** Sent back unchanged (response_type, client_id, redirect_uri, scope, state, ttl, csrf_token…). */
  readonly hidden: ReadonlyArray<readonly [string, string]>;
  readonly username?: string;
  /** Consent only: the person is signed in at the authorization server already, no password asked. */
  readonly signedInAs?: string;
  readonly error?: string;
  /** Where the submission may end besides this server: the client's redirect URI (see formTarget). */
  readonly redirectUri?: string | URL;
}

export function authorizationPage(ctx: HttpContext, status: number, form: AuthorizationForm): void {
  const hidden = form.hidden.map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`).join('\n');
  const scopes = form.scopes.map((s) => `<li><code>${escapeHtml(s.scope)}</code>: ${escapeHtml(s.description)}</li>`).join('\n');
  page(
    ctx,
    status,
    'Authorization request',
    `<h1>Authorization request</h1>
<p>The application <strong>${escapeHtml(form.application)}</strong> asks to access your account with these scopes:</p>
<ul>${scopes}</ul>
${form.error ? `<p class="error" role="alert">${escapeHtml(form.error)}</p>` : ''}
<form method="post" action="${escapeHtml(form.action)}">
${hidden}
${
    form.signedInAs
      ? `<p>Signed in as <strong>${escapeHtml(form.signedInAs)}</strong>.</p>`
      : `<label for="username">Your JID (user@domain)</label>
<input type="text" id="username" name="username" autocomplete="username" required value="${escapeHtml(form.username ?? '')}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>`
  }
<div class="actions"><button type="submit" name="accept" value="1">Accept</button><button type="submit" name="deny" value="1" formnovalidate>Deny</button></div>
</form>`,
    ["'self'", formTarget(form.redirectUri)].filter(Boolean).join(' '),
  );
}

/** For requests that cannot be redirected back (unknown client, wrong redirect URI): say why, go nowhere. */
export function errorPage(ctx: HttpContext, status: number, error: string, description: string): void {
  page(ctx, status, 'Authorization error', `<h1>Authorization error</h1>\n<p class="error" role="alert"><code>${escapeHtml(error)}</code>: ${escapeHtml(description)}</p>`);
}
