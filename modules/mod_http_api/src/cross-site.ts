/**
 * Cross-site request forgery guard. A page on another site can make the browser of someone on this machine
 * send `GET /api/stop` (an image) or `POST /api/unregister` (a form, a no-cors fetch), and the browser adds
 * what it holds: cached HTTP Basic credentials, or simply a loopback address that api_permissions trusts.
 * Browsers say where a request comes from in `Sec-Fetch-Site` and how in `Sec-Fetch-Mode`; scripts, curl and
 * servers send neither, so only browser requests are concerned.
 *
 * A request from another site is taken only when it is a CORS request (`Sec-Fetch-Mode: cors`) that carries
 * its own `Authorization` header: setting that header takes a preflight, which only a page that means to call
 * the API makes. Everything else from another site is a 403 naming the reason.
 */
import { CommandError, type HttpContext } from '@service/plugin-api';

const OTHER_SITES = new Set(['cross-site', 'same-site']);

export function refuseForgedRequest(ctx: HttpContext): void {
  const site = ctx.get('sec-fetch-site');
  if (!OTHER_SITES.has(site)) return;
  if (ctx.get('sec-fetch-mode') !== 'cors') {
    throw new CommandError('forbidden', `a browser request from another site (${site}) must be a CORS request (fetch with an Authorization header), not a page load, image or form`);
  }
  if (!ctx.get('authorization')) {
    throw new CommandError('forbidden', `a browser request from another site (${site}) must carry an Authorization header: the address of this machine proves nothing for it`);
  }
}
