/**
 * The <prefs/> IQ (XEP-0313 §6): an account reads and sets its archiving preferences. The answer to a set
 * is the preferences as stored, so the client sees what the server made of its JIDs.
 */
import { Jid, StanzaError, accountKey, x, type IqContext, type XmlElement } from '@service/plugin-api';
import { NS_MAM } from './ns.js';
import { DEFAULT_MODES, type DefaultMode, type Prefs, type PrefsStore } from './prefs-store.js';

export function prefsElement(prefs: Prefs): XmlElement {
  return x(
    'prefs',
    { xmlns: NS_MAM, default: prefs.default },
    x('always', {}, ...prefs.always.map((j) => x('jid', {}, j))),
    x('never', {}, ...prefs.never.map((j) => x('jid', {}, j))),
  );
}

function jidsOf(prefs: XmlElement, list: 'always' | 'never'): string[] {
  const jids = (prefs.getChild(list)?.getChildren('jid') ?? []).map((el) => {
    const jid = Jid.tryParse(el.text().trim());
    if (!jid) throw new StanzaError('bad-request', `'${list}': '${el.text()}' is not a valid JID`, 'modify');
    return jid.toString();
  });
  return [...new Set(jids)];
}

export async function getPrefs(ctx: IqContext, store: PrefsStore, fallback: DefaultMode): Promise<XmlElement> {
  if (!ctx.self) throw new StanzaError('forbidden', 'only the account itself may read its archiving preferences');
  const prefs = await store.get(accountKey(ctx.to.user!, ctx.to.host));
  return prefsElement(prefs ?? { default: fallback, always: [], never: [] });
}

export async function setPrefs(ctx: IqContext, store: PrefsStore): Promise<XmlElement> {
  if (!ctx.self) throw new StanzaError('forbidden', 'only the account itself may set its archiving preferences');
  const mode = ctx.payload.attr('default');
  if (!DEFAULT_MODES.includes(mode as DefaultMode)) throw new StanzaError('bad-request', `'default': expected always, roster or never, got '${mode ?? ''}'`, 'modify');
  const always = jidsOf(ctx.payload, 'always');
  const never = jidsOf(ctx.payload, 'never');
  const prefs: Prefs = { default: mode as DefaultMode, always: always.filter((j) => !never.includes(j)), never };
  await store.set(accountKey(ctx.to.user!, ctx.to.host), prefs);
  return prefsElement(prefs);
}
