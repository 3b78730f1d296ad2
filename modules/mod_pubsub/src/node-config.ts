/**
 * A node's configuration (XEP-0060 §8.2, the `pubsub#node_config` form): what it holds, its defaults for
 * a PEP node (XEP-0163 §3), how a submitted form (configure, create-and-configure, publish-options)
 * changes it, with the form errors a client can cause, and the publish-options preconditions of
 * XEP-0060 §7.1.5 that OMEMO and bookmarks rely on.
 */
import { StanzaError, x, type XmlElement } from '@service/plugin-api';
import { pubsubError } from './errors.js';
import { NS_DATA, NS_PUBSUB_NODE_CONFIG, NS_PUBSUB_PUBLISH_OPTIONS } from './ns.js';

export const ACCESS_MODELS = ['open', 'presence', 'roster', 'whitelist', 'authorize'] as const;
export type AccessModel = (typeof ACCESS_MODELS)[number];
export const PUBLISH_MODELS = ['publishers', 'subscribers', 'open'] as const;
export type PublishModel = (typeof PUBLISH_MODELS)[number];
export const SEND_LAST = ['never', 'on_sub', 'on_sub_and_presence'] as const;
export type SendLastPublished = (typeof SEND_LAST)[number];
export const NOTIFICATION_TYPES = ['headline', 'normal'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

export interface NodeConfig {
  readonly title: string;
  readonly accessModel: AccessModel;
  readonly publishModel: PublishModel;
  /** Roster groups whose members may see a node with the `roster` access model. */
  readonly rosterGroupsAllowed: readonly string[];
  readonly persistItems: boolean;
  /** How many items the node keeps; the newest stay. */
  readonly maxItems: number;
  /** Seconds after which an item expires (0: never). */
  readonly itemExpire: number;
  readonly deliverPayloads: boolean;
  readonly deliverNotifications: boolean;
  readonly notifyRetract: boolean;
  readonly notifyDelete: boolean;
  readonly notifyConfig: boolean;
  readonly sendLastPublishedItem: SendLastPublished;
  /** The type of the notification messages. */
  readonly notificationType: NotificationType;
  readonly type: string;
}

/** The limits from the module's options that every configuration is checked against. */
export interface ConfigLimits {
  /** The largest max_items; also what `max` means. */
  readonly maxItemsNode: number;
}

export function defaultPepConfig(): NodeConfig {
  return {
    title: '',
    accessModel: 'presence',
    publishModel: 'publishers',
    rosterGroupsAllowed: [],
    persistItems: true,
    maxItems: 1,
    itemExpire: 0,
    deliverPayloads: true,
    deliverNotifications: true,
    notifyRetract: true,
    notifyDelete: true,
    notifyConfig: false,
    sendLastPublishedItem: 'on_sub_and_presence',
    notificationType: 'headline',
    type: '',
  };
}

type FieldKind = 'boolean' | 'text-single' | 'list-single' | 'list-multi';

interface FieldSpec {
  readonly kind: FieldKind;
  readonly label: string;
  readonly options?: readonly string[];
  /** Reads the form value(s) into the configuration; throws a form error for a bad value. */
  apply(config: NodeConfig, values: readonly string[], limits: ConfigLimits): NodeConfig;
  /** The configuration's value(s) as the form shows them. */
  show(config: NodeConfig): string[];
}

const bool = (name: string, values: readonly string[]): boolean => {
  const v = single(name, values);
  if (v === '1' || v === 'true') return true;
  if (v === '0' || v === 'false') return false;
  throw invalid(`${name} takes a boolean, not '${v}'`);
};

const integer = (name: string, values: readonly string[], max: number): number => {
  const v = single(name, values);
  if (!/^\d+$/.test(v)) throw invalid(`${name} takes a non-negative integer, not '${v}'`);
  const n = Number(v);
  if (n > max) throw pubsubError('not-acceptable', 'max-items-exceeded', `${name} is at most ${max}`);
  return n;
};

function single(name: string, values: readonly string[]): string {
  if (values.length !== 1) throw invalid(`${name} takes one value`);
  return values[0]!;
}

function oneOf<T extends string>(name: string, values: readonly string[], allowed: readonly T[]): T {
  const v = single(name, values);
  if (!(allowed as readonly string[]).includes(v)) throw invalid(`${name} is one of ${allowed.join(', ')}, not '${v}'`);
  return v as T;
}

function invalid(text: string): StanzaError {
  return pubsubError('bad-request', 'invalid-options', text);
}

const FIELDS: Readonly<Record<string, FieldSpec>> = {
  'pubsub#title': { kind: 'text-single', label: 'A friendly name for the node', apply: (c, v) => ({ ...c, title: single('pubsub#title', v) }), show: (c) => [c.title] },
  'pubsub#access_model': {
    kind: 'list-single',
    label: 'Who may subscribe and retrieve items',
    options: ACCESS_MODELS,
    apply: (c, v) => ({ ...c, accessModel: oneOf('pubsub#access_model', v, ACCESS_MODELS) }),
    show: (c) => [c.accessModel],
  },
  'pubsub#publish_model': {
    kind: 'list-single',
    label: 'Who may publish',
    options: PUBLISH_MODELS,
    apply: (c, v) => ({ ...c, publishModel: oneOf('pubsub#publish_model', v, PUBLISH_MODELS) }),
    show: (c) => [c.publishModel],
  },
  'pubsub#roster_groups_allowed': {
    kind: 'list-multi',
    label: 'Roster groups allowed to subscribe',
    apply: (c, v) => ({ ...c, rosterGroupsAllowed: [...v] }),
    show: (c) => [...c.rosterGroupsAllowed],
  },
  'pubsub#persist_items': { kind: 'boolean', label: 'Persist items to storage', apply: (c, v) => ({ ...c, persistItems: bool('pubsub#persist_items', v) }), show: (c) => [String(c.persistItems)] },
  'pubsub#max_items': {
    kind: 'text-single',
    label: 'Max # of items to persist',
    apply: (c, v, limits) => ({ ...c, maxItems: single('pubsub#max_items', v) === 'max' ? limits.maxItemsNode : integer('pubsub#max_items', v, limits.maxItemsNode) }),
    show: (c) => [String(c.maxItems)],
  },
  'pubsub#item_expire': {
    kind: 'text-single',
    label: 'Number of seconds after which to automatically purge items (0: never)',
    apply: (c, v) => ({ ...c, itemExpire: integer('pubsub#item_expire', v, Number.MAX_SAFE_INTEGER) }),
    show: (c) => [String(c.itemExpire)],
  },
  'pubsub#deliver_payloads': { kind: 'boolean', label: 'Deliver payloads with event notifications', apply: (c, v) => ({ ...c, deliverPayloads: bool('pubsub#deliver_payloads', v) }), show: (c) => [String(c.deliverPayloads)] },
  'pubsub#deliver_notifications': {
    kind: 'boolean',
    label: 'Deliver event notifications',
    apply: (c, v) => ({ ...c, deliverNotifications: bool('pubsub#deliver_notifications', v) }),
    show: (c) => [String(c.deliverNotifications)],
  },
  'pubsub#notify_retract': { kind: 'boolean', label: 'Notify subscribers when items are removed from the node', apply: (c, v) => ({ ...c, notifyRetract: bool('pubsub#notify_retract', v) }), show: (c) => [String(c.notifyRetract)] },
  'pubsub#notify_delete': { kind: 'boolean', label: 'Notify subscribers when the node is deleted', apply: (c, v) => ({ ...c, notifyDelete: bool('pubsub#notify_delete', v) }), show: (c) => [String(c.notifyDelete)] },
  'pubsub#notify_config': { kind: 'boolean', label: 'Notify subscribers when the node configuration changes', apply: (c, v) => ({ ...c, notifyConfig: bool('pubsub#notify_config', v) }), show: (c) => [String(c.notifyConfig)] },
  'pubsub#send_last_published_item': {
    kind: 'list-single',
    label: 'When to send the last published item',
    options: SEND_LAST,
    apply: (c, v) => ({ ...c, sendLastPublishedItem: oneOf('pubsub#send_last_published_item', v, SEND_LAST) }),
    show: (c) => [c.sendLastPublishedItem],
  },
  'pubsub#notification_type': {
    kind: 'list-single',
    label: 'The type of notification messages',
    options: NOTIFICATION_TYPES,
    apply: (c, v) => ({ ...c, notificationType: oneOf('pubsub#notification_type', v, NOTIFICATION_TYPES) }),
    show: (c) => [c.notificationType],
  },
  'pubsub#type': { kind: 'text-single', label: 'The type of node data, usually specified by the namespace of the payload', apply: (c, v) => ({ ...c, type: v[0] ?? '' }), show: (c) => (c.type ? [c.type] : []) },
};

/** The fields of a submitted form, FORM_TYPE apart, checked to be of `formType`. */
export function formFields(form: XmlElement, formType: string): Map<string, string[]> {
  if (!form.is('x', NS_DATA)) throw invalid('expected a jabber:x:data form');
  const type = form.attr('type');
  if (type !== 'submit' && type !== 'cancel') throw invalid("the form's type must be submit");
  const fields = new Map<string, string[]>();
  for (const field of form.getChildren('field')) {
    const name = field.attr('var');
    if (!name) continue;
    const values = field.getChildren('value').map((v) => v.text());
    if (name === 'FORM_TYPE') {
      if (values[0] !== formType) throw invalid(`FORM_TYPE must be ${formType}`);
      continue;
    }
    fields.set(name, values);
  }
  return fields;
}

/**
 * A configuration changed by submitted fields. An unknown field is refused (a client would otherwise
 * believe a setting applied); an empty cancel form changes nothing.
 */
export function applyFields(config: NodeConfig, fields: ReadonlyMap<string, string[]>, limits: ConfigLimits): NodeConfig {
  let next = config;
  for (const [name, values] of fields) {
    const spec = FIELDS[name];
    if (!spec) throw invalid(`unknown node configuration field ${name}`);
    next = spec.apply(next, values, limits);
  }
  return next;
}

/**
 * XEP-0060 §7.1.5: every publish-options field must equal the existing node's configuration, else the
 * publish fails with <conflict/> and <precondition-not-met/>. A field this server does not know cannot be
 * met either. Values compare after parsing, so '1' meets 'true' and 'max' meets the largest max_items.
 */
export function checkPreconditions(config: NodeConfig, fields: ReadonlyMap<string, string[]>, limits: ConfigLimits): void {
  for (const [name, values] of fields) {
    const spec = FIELDS[name];
    if (!spec) throw pubsubError('conflict', 'precondition-not-met', `unknown publish option ${name}`);
    let wanted: NodeConfig;
    try {
      wanted = spec.apply(config, values, limits);
    } catch {
      throw pubsubError('conflict', 'precondition-not-met', `bad value for ${name}`);
    }
    if (JSON.stringify(spec.show(wanted)) !== JSON.stringify(spec.show(config))) {
      throw pubsubError('conflict', 'precondition-not-met', `${name} is ${spec.show(config).join(', ') || 'empty'} on this node`);
    }
  }
}

/** The node configuration form (XEP-0060 §8.2.1), filled with the node's values. */
export function configForm(config: NodeConfig, formType: 'form' | 'result' = 'form'): XmlElement {
  return x(
    'x',
    { xmlns: NS_DATA, type: formType },
    x('field', { var: 'FORM_TYPE', type: 'hidden' }, x('value', {}, NS_PUBSUB_NODE_CONFIG)),
    ...Object.entries(FIELDS).map(([name, spec]) =>
      x(
        'field',
        { var: name, type: spec.kind, label: spec.label },
        ...(spec.options ?? []).map((o) => x('option', {}, x('value', {}, o))),
        ...spec.show(config).map((v) => x('value', {}, v)),
      ),
    ),
  );
}

/** Parses the stored JSON over the defaults, so that a field added later has its default in old rows. */
export function parseStoredConfig(json: string): NodeConfig {
  return { ...defaultPepConfig(), ...(JSON.parse(json) as Partial<NodeConfig>) };
}

export const FORM_TYPES = { nodeConfig: NS_PUBSUB_NODE_CONFIG, publishOptions: NS_PUBSUB_PUBLISH_OPTIONS } as const;
