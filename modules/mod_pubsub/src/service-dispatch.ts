/**
 * Stanzas to the pubsub service's domain (pubsub.@HOST@): the IQs of XEP-0060 (entity use cases in
 * `pubsub`, owner use cases in `pubsub#owner`) and service discovery of the service, its nodes and their
 * items, read into what PubsubService does and answered; a StanzaError is answered as such, anything else
 * is logged and answered with internal-server-error. Messages and presence to the service are not used.
 */
import { Jid, StanzaError, x, type Logger, type RouterApi, type XmlElement } from '@service/plugin-api';
import { pubsubError } from './errors.js';
import { AFFILIATIONS, type Affiliation } from './membership-store.js';
import { keyName } from './names.js';
import { configForm, FORM_TYPES, formFields } from './node-config.js';
import { NS_DATA, NS_DISCO_INFO, NS_PUBSUB, NS_PUBSUB_OWNER, SERVICE_FEATURES } from './ns.js';
import { itemIdOf, itemsRequest, nodeOf } from './request-parts.js';
import { defaultServiceConfig, type PubsubService } from './service.js';

const NS_DISCO_ITEMS = 'http://jabber.org/protocol/disco#items';

export class ServiceDispatch {
  constructor(
    private readonly service: PubsubService,
    private readonly router: RouterApi,
    private readonly logger: Logger,
  ) {}

  async handle(stanza: XmlElement, from: Jid, to: Jid): Promise<void> {
    try {
      if (stanza.name !== 'iq') {
        if (stanza.name === 'message' && stanza.attr('type') !== 'error') throw new StanzaError('service-unavailable', 'the pubsub service takes no messages');
        return;
      }
      const type = stanza.attr('type');
      if (type !== 'get' && type !== 'set') return;
      if (to.user !== undefined || to.resource !== undefined) throw new StanzaError('service-unavailable');
      const payloads = stanza.elements();
      if (payloads.length !== 1) throw new StanzaError('bad-request', 'an IQ get or set carries exactly one payload element');
      const result = await this.#iq(type, payloads[0]!, from, to.host);
      await this.router.route(x('iq', { type: 'result', id: stanza.attr('id'), from: to.full, to: from.full }, result));
    } catch (err) {
      if (!(err instanceof StanzaError)) this.logger.error({ err }, 'a pubsub service request failed');
      await this.router.bounce(stanza, err instanceof StanzaError ? err : new StanzaError('internal-server-error')).catch(() => undefined);
    }
  }

  async #iq(type: 'get' | 'set', payload: XmlElement, from: Jid, service: string): Promise<XmlElement | undefined> {
    if (type === 'get' && payload.is('query', NS_DISCO_INFO)) return this.#discoInfo(payload, service);
    if (type === 'get' && payload.is('query', NS_DISCO_ITEMS)) return this.#discoItems(payload, from, service);
    if (payload.is('pubsub', NS_PUBSUB)) return type === 'get' ? this.#entityGet(payload, from, service) : this.#entitySet(payload, from, service);
    if (payload.is('pubsub', NS_PUBSUB_OWNER)) return type === 'get' ? this.#ownerGet(payload, from, service) : this.#ownerSet(payload, from, service);
    throw new StanzaError('service-unavailable');
  }

  async #discoInfo(query: XmlElement, service: string): Promise<XmlElement> {
    const node = query.attr('node');
    if (node === undefined) {
      return x('query', { xmlns: NS_DISCO_INFO }, x('identity', { category: 'pubsub', type: 'service', name: 'Publish-Subscribe' }), ...[NS_DISCO_INFO, NS_DISCO_ITEMS, NS_PUBSUB, ...SERVICE_FEATURES].map((v) => x('feature', { var: v })));
    }
    await this.service.requireNode(service, node);
    return x('query', { xmlns: NS_DISCO_INFO, node }, x('identity', { category: 'pubsub', type: 'leaf' }), x('feature', { var: NS_PUBSUB }));
  }

  async #discoItems(query: XmlElement, from: Jid, service: string): Promise<XmlElement> {
    const node = query.attr('node');
    if (node === undefined) {
      const nodes = await this.service.nodes(service);
      return x('query', { xmlns: NS_DISCO_ITEMS }, ...nodes.map((n) => x('item', { jid: service, node: n.node, name: n.config.title || undefined })));
    }
    const items = await this.service.items(service, from, node, {});
    return x('query', { xmlns: NS_DISCO_ITEMS, node }, ...items.map((i) => x('item', { jid: service, name: i.itemId })));
  }

  async #entityGet(payload: XmlElement, from: Jid, service: string): Promise<XmlElement> {
    const verb = only(payload);
    switch (verb.name) {
      case 'items': {
        const { node, options } = itemsRequest(verb);
        const items = await this.service.items(service, from, node, options);
        return x('pubsub', { xmlns: NS_PUBSUB }, x('items', { node }, ...items.map((i) => i.item)));
      }
      case 'subscriptions': {
        const only = verb.attr('node');
        const nodes = new Map((await this.service.nodes(service)).map((n) => [n.id, n.node]));
        const mine = (await this.service.subscriptionsOf(from.bare)).filter((s) => nodes.has(s.nodeId) && (only === undefined || nodes.get(s.nodeId) === only));
        return x('pubsub', { xmlns: NS_PUBSUB }, x('subscriptions', { node: only }, ...mine.map((s) => x('subscription', { node: nodes.get(s.nodeId), jid: s.jid, subid: s.subid, subscription: 'subscribed' }))));
      }
      case 'affiliations': {
        const only = verb.attr('node');
        const nodes = new Map((await this.service.nodes(service)).map((n) => [n.id, n.node]));
        const mine = (await this.service.affiliationsOf(from.bare)).filter((a) => nodes.has(a.nodeId) && (only === undefined || nodes.get(a.nodeId) === only));
        return x('pubsub', { xmlns: NS_PUBSUB }, x('affiliations', { node: only }, ...mine.map((a) => x('affiliation', { node: nodes.get(a.nodeId), affiliation: a.affiliation }))));
      }
      case 'options':
      case 'default':
        throw unsupported('subscription-options');
      default:
        throw new StanzaError('bad-request', `unknown pubsub request <${verb.name}/>`);
    }
  }

  async #entitySet(payload: XmlElement, from: Jid, service: string): Promise<XmlElement | undefined> {
    const children = payload.elements();
    const verb = children.find((c) => c.name !== 'publish-options' && c.name !== 'configure' && c.name !== 'options');
    if (!verb) throw new StanzaError('bad-request', 'the pubsub request names no action');
    const companion = (name: string, formType: string) => {
      const form = children.find((c) => c.name === name)?.getChild('x', NS_DATA);
      return form ? formFields(form, formType) : new Map<string, string[]>();
    };
    switch (verb.name) {
      case 'create': {
        const named = verb.attr('node');
        const node = await this.service.create(service, from, named ? keyName('node', named) : undefined, companion('configure', FORM_TYPES.nodeConfig));
        return named ? undefined : x('pubsub', { xmlns: NS_PUBSUB }, x('create', { node }));
      }
      case 'publish': {
        const node = nodeOf(verb);
        const items = verb.getChildren('item');
        if (items.length > 1) throw pubsubError('bad-request', 'invalid-payload', 'one item per publish');
        const payloads = items[0]?.elements() ?? [];
        if (payloads.length > 1) throw pubsubError('bad-request', 'invalid-payload', 'an item carries one payload element');
        const id = await this.service.publish(service, from, node, itemIdOf(items[0]), payloads[0]?.clone(), companion('publish-options', FORM_TYPES.publishOptions));
        return x('pubsub', { xmlns: NS_PUBSUB }, x('publish', { node }, x('item', { id })));
      }
      case 'retract': {
        const id = verb.getChild('item')?.attr('id');
        if (!id) throw pubsubError('bad-request', 'item-required', 'a retract names its item');
        const notify = verb.attr('notify');
        await this.service.retract(service, from, nodeOf(verb), id, notify === undefined ? undefined : notify === 'true' || notify === '1');
        return undefined;
      }
      case 'subscribe': {
        const node = nodeOf(verb);
        const subscription = await this.service.subscribe(service, from, node, jidAttr(verb));
        return x('pubsub', { xmlns: NS_PUBSUB }, x('subscription', { node, jid: subscription.jid, subid: subscription.subid, subscription: 'subscribed' }));
      }
      case 'unsubscribe':
        await this.service.unsubscribe(service, from, nodeOf(verb), jidAttr(verb));
        return undefined;
      default:
        throw new StanzaError('bad-request', `unknown pubsub request <${verb.name}/>`);
    }
  }

  async #ownerGet(payload: XmlElement, from: Jid, service: string): Promise<XmlElement> {
    const verb = only(payload);
    if (verb.name === 'default') return x('pubsub', { xmlns: NS_PUBSUB_OWNER }, x('default', {}, configForm(defaultServiceConfig())));
    const node = await this.service.requireNode(service, nodeOf(verb));
    await this.service.requireOwner(node, from);
    switch (verb.name) {
      case 'configure':
        return x('pubsub', { xmlns: NS_PUBSUB_OWNER }, x('configure', { node: node.node }, configForm(node.config)));
      case 'subscriptions': {
        const subscriptions = await this.service.subscriptionsOfNode(node);
        return x('pubsub', { xmlns: NS_PUBSUB_OWNER }, x('subscriptions', { node: node.node }, ...subscriptions.map((s) => x('subscription', { jid: s.jid, subid: s.subid, subscription: 'subscribed' }))));
      }
      case 'affiliations': {
        const affiliations = await this.service.affiliationsOfNode(node);
        return x('pubsub', { xmlns: NS_PUBSUB_OWNER }, x('affiliations', { node: node.node }, ...affiliations.map((a) => x('affiliation', { jid: a.jid, affiliation: a.affiliation }))));
      }
      default:
        throw new StanzaError('bad-request', 'unknown pubsub#owner request');
    }
  }

  async #ownerSet(payload: XmlElement, from: Jid, service: string): Promise<undefined> {
    const verb = only(payload);
    switch (verb.name) {
      case 'configure': {
        const form = verb.getChild('x', NS_DATA);
        if (!form) throw pubsubError('bad-request', 'invalid-options', 'configure carries the node_config form');
        if (form.attr('type') !== 'cancel') await this.service.configure(service, from, nodeOf(verb), formFields(form, FORM_TYPES.nodeConfig));
        return undefined;
      }
      case 'delete':
        await this.service.deleteNode(service, from, nodeOf(verb));
        return undefined;
      case 'purge':
        await this.service.purge(service, from, nodeOf(verb));
        return undefined;
      case 'subscriptions': {
        const node = await this.service.requireNode(service, nodeOf(verb));
        const changes = verb.getChildren('subscription').map((s) => {
          const state = s.attr('subscription');
          if (state !== 'subscribed' && state !== 'none') throw new StanzaError('bad-request', 'subscription is subscribed or none');
          return { jid: jidAttr(s), subscribed: state === 'subscribed' };
        });
        await this.service.setSubscriptions(node, from, changes);
        return undefined;
      }
      case 'affiliations': {
        const node = await this.service.requireNode(service, nodeOf(verb));
        const changes = verb.getChildren('affiliation').map((a) => {
          const affiliation = a.attr('affiliation');
          if (affiliation !== 'none' && !(AFFILIATIONS as readonly string[]).includes(affiliation ?? '')) throw new StanzaError('bad-request', `affiliation is one of none, ${AFFILIATIONS.join(', ')}`);
          return { jid: jidAttr(a), affiliation: affiliation as Affiliation | 'none' };
        });
        await this.service.setAffiliations(node, from, changes);
        return undefined;
      }
      default:
        throw new StanzaError('bad-request', 'unknown pubsub#owner request');
    }
  }
}

function only(payload: XmlElement): XmlElement {
  const verb = payload.elements()[0];
  if (!verb) throw new StanzaError('bad-request', 'the pubsub request names no action');
  return verb;
}

function jidAttr(element: XmlElement): Jid {
  const jid = Jid.tryParse(element.attr('jid'));
  if (!jid) throw pubsubError('bad-request', 'invalid-jid', 'a valid jid attribute is required');
  keyName('jid', jid.full);
  return jid;
}

function unsupported(feature: string): StanzaError {
  return pubsubError('feature-not-implemented', 'unsupported', `${feature} is not offered by this service`, `${NS_PUBSUB}#${feature}`);
}
