/** The <enable/> and <disable/> requests (XEP-0280 §§3–4): only a client for its own session. */
import type { IqContext, IqHandlerRegistration } from '@service/plugin-api';
import { setCarbons } from './carbon-state.js';
import { NS_CARBONS } from './ns.js';
import { StanzaError } from '@service/plugin-api';

export function toggleHandlers(): IqHandlerRegistration[] {
  const toggle = (enabled: boolean) => (ctx: IqContext) => {
    // §3.1: <not-allowed/> for anyone but a client of this account (the setting is per session).
    if (!ctx.session || !ctx.self) throw new StanzaError('not-allowed', 'carbons are enabled by a client for its own session');
    setCarbons(ctx.session, enabled);
  };
  return [
    { type: 'set', ns: NS_CARBONS, name: 'enable', to: 'account', handler: toggle(true) },
    { type: 'set', ns: NS_CARBONS, name: 'disable', to: 'account', handler: toggle(false) },
  ];
}
