/**
 * The pubsub IQs to an account's bare JID (XEP-0163 on XEP-0060 §6-§8): publish (with publish-options),
 * retract, items, create (with configure), and the owner's configure, default, delete and purge. Each
 * request is read into what Pep does; what it cannot be is answered with XEP-0060's conditions
 * (nodeid-required, item-required, invalid-payload, unsupported…). Entity requests this PEP service does
 * not offer (explicit subscriptions, affiliations lists) are feature-not-implemented with the feature named.
 */
import { StanzaError, x, type IqContext, type XmlElement } from '@service/plugin-api';
import { pubsubError } from './errors.js';
import { configForm, defaultPepConfig, FORM_TYPES, formFields } from './node-config.js';
import { NS_DATA, NS_PUBSUB, NS_PUBSUB_OWNER } from './ns.js';
import type { Pep } from './pep.js';
import { itemIdOf, itemsRequest, nodeOf } from './request-parts.js';

/** The one action element of a <pubsub/>, with its <publish-options/> or <configure/> companion. */
function action(payload: XmlElement): { verb: XmlElement; companion: XmlElement | undefined } {
  const children = payload.elements();
  const verb = children.find((c) => c.name !== 'publish-options' && c.name !== 'configure') ?? children.find((c) => c.name === 'configure');
  if (!verb) throw new StanzaError('bad-request', 'the pubsub request names no action');
  const companion = children.find((c) => c !== verb && (c.name === 'publish-options' || c.name === 'configure'));
  return { verb, companion };
}

/** The fields of the form inside <publish-options/> or <configure/> (none when it is empty). */
function companionFields(companion: XmlElement | undefined, formType: string): Map<string, string[]> {
  const form = companion?.getChild('x', NS_DATA);
  return form ? formFields(form, formType) : new Map();
}

function unsupported(feature: string): StanzaError {
  return pubsubError('feature-not-implemented', 'unsupported', `${feature} is not offered by this PEP service`, feature);
}

export function pubsubSet(pep: Pep): (ctx: IqContext) => Promise<XmlElement | void> {
  return async ({ payload, from, to }) => {
    const { verb, companion } = action(payload);
    switch (verb.name) {
      case 'publish': {
        const node = nodeOf(verb);
        const items = verb.getChildren('item');
        if (items.length > 1) throw pubsubError('bad-request', 'invalid-payload', 'one item per publish');
        const item = items[0];
        if (!item) throw pubsubError('bad-request', 'item-required', 'a PEP publish carries an item');
        const payloads = item.elements();
        if (payloads.length > 1) throw pubsubError('bad-request', 'invalid-payload', 'an item carries one payload element');
        const options = companionFields(companion?.name === 'publish-options' ? companion : undefined, FORM_TYPES.publishOptions);
        const id = await pep.publish(to, from, { node, itemId: itemIdOf(item), payload: payloads[0]?.clone(), options });
        return x('pubsub', { xmlns: NS_PUBSUB }, x('publish', { node }, x('item', { id })));
      }
      case 'retract': {
        const node = nodeOf(verb);
        const item = verb.getChild('item');
        const id = item?.attr('id');
        if (!id) throw pubsubError('bad-request', 'item-required', 'a retract names its item');
        const notifyAttr = verb.attr('notify');
        const notify = notifyAttr === undefined ? undefined : notifyAttr === 'true' || notifyAttr === '1';
        await pep.retract(to, from, node, id, notify);
        return;
      }
      case 'create': {
        const node = nodeOf(verb);
        await pep.create(to, from, node, companionFields(companion?.name === 'configure' ? companion : undefined, FORM_TYPES.nodeConfig));
        return;
      }
      case 'subscribe':
      case 'unsubscribe':
        throw unsupported(`${NS_PUBSUB}#subscribe`);
      case 'options':
        throw unsupported(`${NS_PUBSUB}#subscription-options`);
      default:
        throw new StanzaError('bad-request', `unknown pubsub request <${verb.name}/>`);
    }
  };
}

export function pubsubGet(pep: Pep): (ctx: IqContext) => Promise<XmlElement | void> {
  return async ({ payload, from, to }) => {
    const { verb } = action(payload);
    switch (verb.name) {
      case 'items': {
        const { node, options } = itemsRequest(verb);
        const { items } = await pep.items(to, from, node, options);
        return x('pubsub', { xmlns: NS_PUBSUB }, x('items', { node }, ...items.map((i) => i.item)));
      }
      case 'subscriptions':
        throw unsupported(`${NS_PUBSUB}#retrieve-subscriptions`);
      case 'affiliations':
        throw unsupported(`${NS_PUBSUB}#retrieve-affiliations`);
      case 'options':
      case 'default':
        throw unsupported(`${NS_PUBSUB}#subscription-options`);
      default:
        throw new StanzaError('bad-request', `unknown pubsub request <${verb.name}/>`);
    }
  };
}

export function ownerGet(pep: Pep): (ctx: IqContext) => Promise<XmlElement | void> {
  return async ({ payload, from, to }) => {
    const verb = payload.elements()[0];
    switch (verb?.name) {
      case 'configure': {
        const node = nodeOf(verb);
        const config = await pep.configuration(to, from, node);
        return x('pubsub', { xmlns: NS_PUBSUB_OWNER }, x('configure', { node }, configForm(config)));
      }
      case 'default':
        return x('pubsub', { xmlns: NS_PUBSUB_OWNER }, x('default', {}, configForm(defaultPepConfig())));
      case 'subscriptions':
        throw unsupported(`${NS_PUBSUB}#manage-subscriptions`);
      case 'affiliations':
        throw unsupported(`${NS_PUBSUB}#modify-affiliations`);
      default:
        throw new StanzaError('bad-request', 'unknown pubsub#owner request');
    }
  };
}

export function ownerSet(pep: Pep): (ctx: IqContext) => Promise<XmlElement | void> {
  return async ({ payload, from, to }) => {
    const verb = payload.elements()[0];
    switch (verb?.name) {
      case 'configure': {
        const node = nodeOf(verb);
        const form = verb.getChild('x', NS_DATA);
        if (!form) throw pubsubError('bad-request', 'invalid-options', 'configure carries the node_config form');
        if (form.attr('type') === 'cancel') return;
        await pep.configure(to, from, node, formFields(form, FORM_TYPES.nodeConfig));
        return;
      }
      case 'delete':
        await pep.deleteNode(to, from, nodeOf(verb));
        return;
      case 'purge':
        await pep.purge(to, from, nodeOf(verb));
        return;
      case 'subscriptions':
        throw unsupported(`${NS_PUBSUB}#manage-subscriptions`);
      case 'affiliations':
        throw unsupported(`${NS_PUBSUB}#modify-affiliations`);
      default:
        throw new StanzaError('bad-request', 'unknown pubsub#owner request');
    }
  };
}
