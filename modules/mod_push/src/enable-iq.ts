/**
 * The client's side of XEP-0357 (§5, §6): <enable jid node> with an optional publish-options form, and
 * <disable jid [node]>, answered for the sender's own account only. What each refusal means:
 *
 *   - forbidden: the IQ addresses another account (push sessions are the sender's own);
 *   - bad-request: no or an invalid `jid`, no `node` on <enable/> (the XEP's schema requires it), or a
 *     form that is no submitted data form, or more than one;
 *   - not-acceptable: a well-formed request this server will not store: a form whose FORM_TYPE is not
 *     pubsub#publish-options (it would be sent to the app server as publish options), or an app server
 *     JID longer than the 191 characters the table keys on;
 *   - item-not-found: <disable/> of an app server (and node) the account never enabled, as ejabberd
 *     answers; <enable/> from no client session (nothing could be notified).
 */
import { Jid, StanzaError, type IqContext, type Logger, type XmlElement } from '@service/plugin-api';
import { NS_DATA, NS_PUBLISH_OPTIONS } from './ns.js';
import type { PushStore } from './store.js';

/** The `service` column's length. */
const MAX_SERVICE_LENGTH = 191;

export class PushRequests {
  constructor(
    private readonly store: PushStore,
    private readonly logger: Logger,
  ) {}

  async enable(ctx: IqContext): Promise<void> {
    ownAccount(ctx);
    const service = appServer(ctx.payload);
    const node = ctx.payload.attr('node');
    if (!node) throw new StanzaError('bad-request', "<enable/> needs the 'node' attribute the app server gave");
    const publishOptions = publishOptionsOf(ctx.payload);
    const session = ctx.session;
    if (!session || session.closed) throw new StanzaError('item-not-found', 'push is enabled for a client session, and this request comes from none');
    await this.store.enable(ctx.from.toBare(), { service, node, sessionId: session.id, publishOptions }, Date.now());
    this.logger.info({ jid: ctx.from.full, service }, 'push notifications enabled');
  }

  async disable(ctx: IqContext): Promise<void> {
    ownAccount(ctx);
    const service = appServer(ctx.payload);
    // ejabberd reads an empty node as none: every node of that app server.
    const node = ctx.payload.attr('node') || undefined;
    const removed = await this.store.disable(ctx.from.toBare(), service, node);
    if (removed === 0) throw new StanzaError('item-not-found', node === undefined ? 'push is not enabled with this app server' : 'push is not enabled for this node of this app server');
    this.logger.info({ jid: ctx.from.full, service, removed }, 'push notifications disabled');
  }
}

function ownAccount(ctx: IqContext): void {
  if (!ctx.self) throw new StanzaError('forbidden', "push notifications are enabled and disabled for one's own account only");
}

/** The app server's JID, prepared. */
function appServer(payload: XmlElement): string {
  const text = payload.attr('jid');
  if (!text) throw new StanzaError('bad-request', "the 'jid' attribute must name the app server");
  const jid = Jid.tryParse(text);
  if (!jid) throw new StanzaError('bad-request', `'${text}' is not a valid JID`);
  if (jid.full.length > MAX_SERVICE_LENGTH) throw new StanzaError('not-acceptable', `the app server's JID is longer than ${MAX_SERVICE_LENGTH} characters`);
  return jid.full;
}

/** The publish-options form of <enable/>, if any (XEP-0357 §5: a submitted pubsub#publish-options form). */
function publishOptionsOf(payload: XmlElement): XmlElement | undefined {
  const forms = payload.getChildren('x', NS_DATA);
  if (forms.length === 0) return undefined;
  if (forms.length > 1) throw new StanzaError('bad-request', 'at most one publish-options form');
  const form = forms[0]!;
  if (form.attr('type') !== 'submit') throw new StanzaError('bad-request', "the publish-options form must be of type 'submit'");
  const formType = form.getChildren('field').find((f) => f.attr('var') === 'FORM_TYPE')?.getChildText('value');
  if (formType !== NS_PUBLISH_OPTIONS) throw new StanzaError('not-acceptable', `the form's FORM_TYPE must be ${NS_PUBLISH_OPTIONS}`);
  return form.clone();
}
