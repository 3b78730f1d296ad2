/**
 * jabber:iq:last (XEP-0012). To the server: its uptime in seconds. To an account: the seconds since its
 * last logout with the status text it left, or 0 while it has an available session; for the account
 * itself and for contacts allowed to see its presence, <forbidden/> for anyone else.
 */
import type { PresenceAccess } from '@service/mod_roster/api';
import { StanzaError, x, type IqContext, type IqHandlerRegistration, type ServerServices, type XmlElement } from '@service/plugin-api';
import { secondsSince, type LastActivity } from './activity.js';

export const NS_LAST = 'jabber:iq:last';

export function lastIqHandlers(activity: LastActivity, access: PresenceAccess, services: ServerServices): IqHandlerRegistration[] {
  return [
    { type: 'get', ns: NS_LAST, name: 'query', to: 'server', handler: () => answer(secondsSince(services.server.startedAt)) },
    { type: 'get', ns: NS_LAST, name: 'query', to: 'account', handler: (ctx) => accountLastActivity(activity, access, services, ctx) },
  ];
}

function answer(seconds: number, status?: string): XmlElement {
  return x('query', { xmlns: NS_LAST, seconds }, status || undefined);
}

async function accountLastActivity(activity: LastActivity, access: PresenceAccess, services: ServerServices, ctx: IqContext): Promise<XmlElement> {
  const account = { user: ctx.to.user!, host: ctx.to.host };
  if (!ctx.self) {
    // RFC 6121 §8.5.1: an IQ for an account that does not exist is <service-unavailable/>.
    if (!(await services.accounts.exists(account.user, account.host))) throw new StanzaError('service-unavailable');
    if (!(await access(ctx.to, ctx.from))) throw new StanzaError('forbidden', 'you are not subscribed to the presence of this account');
  }
  if (await activity.isOnline(account)) return answer(0);
  const stored = await activity.stored(account);
  if (!stored) throw new StanzaError('item-not-found', 'no last activity is recorded for this account');
  return answer(secondsSince(stored.logoutAt), stored.status);
}
