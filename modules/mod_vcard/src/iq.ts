/**
 * vcard-temp (XEP-0054): an account reads any local account's vCard (an empty one when none is stored)
 * and replaces its own. The server's own vCard is empty.
 */
import { StanzaError, type IqContext, type IqHandlerRegistration, type ServerServices, type XmlElement } from '@service/plugin-api';
import { VcardRejected, NS_VCARD, emptyVcard, type Vcards } from './vcards.js';

export function vcardIqHandlers(vcards: Vcards, services: ServerServices): IqHandlerRegistration[] {
  return [
    { type: 'get', ns: NS_VCARD, to: 'account', handler: (ctx) => getAccountVcard(vcards, services, ctx) },
    { type: 'set', ns: NS_VCARD, to: 'account', handler: (ctx) => setOwnVcard(vcards, ctx) },
    { type: 'get', ns: NS_VCARD, to: 'server', handler: (ctx) => (checkPayload(ctx), emptyVcard()) },
  ];
}

function checkPayload(ctx: IqContext): void {
  if (!ctx.payload.is('vCard', NS_VCARD)) throw new StanzaError('bad-request', `expected <vCard xmlns='${NS_VCARD}'/>`);
}

async function getAccountVcard(vcards: Vcards, services: ServerServices, ctx: IqContext): Promise<XmlElement> {
  checkPayload(ctx);
  const account = { user: ctx.to.user!, host: ctx.to.host };
  // RFC 6121 §8.5.1: an IQ for an account that does not exist is <service-unavailable/>.
  if (!ctx.self && !(await services.accounts.exists(account.user, account.host))) throw new StanzaError('service-unavailable');
  return (await vcards.get(account)) ?? emptyVcard();
}

async function setOwnVcard(vcards: Vcards, ctx: IqContext): Promise<void> {
  // XEP-0054: setting another user's vCard is 403 Forbidden.
  if (!ctx.self) throw new StanzaError('forbidden', 'only the account itself may change its vCard');
  checkPayload(ctx);
  try {
    await vcards.set({ user: ctx.to.user!, host: ctx.to.host }, ctx.payload);
  } catch (err) {
    if (err instanceof VcardRejected) throw new StanzaError(err.reason === 'too-large' ? 'not-acceptable' : 'bad-request', err.message);
    throw err;
  }
}
