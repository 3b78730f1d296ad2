/**
 * The HTML of the OAuth endpoints: the authorization form (who asks, for what, JID and password, Accept or
 * Deny) and the error page shown when there is nowhere safe to redirect to. Everything interpolated is
 * escaped; the pages load nothing and may not be framed (clickjacking).
 */
import type { HttpContext } from '../../http/types.js';
import { noStore } from './oauth-error.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}ul{padding-left:1.2rem}li{margin:.2rem 0}code{background:#f2f2f2;padding:0 .2rem}
label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}
.error{background:#fde8e8;border:1px solid #e0a0a0;padding:.6rem;margin:1rem 0}
.actions{margin-top:1.2rem;display:flex;gap:.6rem}button{padding:.5rem 1.2rem}`;

function page(ctx: HttpContext, status: number, title: string, body: string): void {
  noStore(ctx);
  ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
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
  );
}

/** For requests that cannot be redirected back (unknown client, wrong redirect URI): say why, go nowhere. */
export function errorPage(ctx: HttpContext, status: number, error: string, description: string): void {
  page(ctx, status, 'Authorization error', `<h1>Authorization error</h1>\n<p class="error" role="alert"><code>${escapeHtml(error)}</code>: ${escapeHtml(description)}</p>`);
}
