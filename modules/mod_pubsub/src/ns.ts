/**
 * The namespaces of publish-subscribe (XEP-0060), personal eventing (XEP-0163), entity capabilities
 * (XEP-0115) and the data forms they carry, in one place so that every file spells them alike.
 */
export const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
export const NS_PUBSUB_EVENT = 'http://jabber.org/protocol/pubsub#event';
export const NS_PUBSUB_OWNER = 'http://jabber.org/protocol/pubsub#owner';
export const NS_PUBSUB_ERRORS = 'http://jabber.org/protocol/pubsub#errors';
export const NS_PUBSUB_NODE_CONFIG = 'http://jabber.org/protocol/pubsub#node_config';
export const NS_PUBSUB_PUBLISH_OPTIONS = 'http://jabber.org/protocol/pubsub#publish-options';
export const NS_CAPS = 'http://jabber.org/protocol/caps';
export const NS_DISCO_INFO = 'http://jabber.org/protocol/disco#info';
export const NS_DATA = 'jabber:x:data';

/** The pubsub#… features a PEP service announces on the account (XEP-0163 §4, XEP-0060 §10). */
export const PEP_FEATURES = [
  'access-presence',
  'access-open',
  'access-roster',
  'access-whitelist',
  'auto-create',
  'auto-subscribe',
  'config-node',
  // XEP-0060 §7.1.5: publish-options may say max_items 'max' (clients such as Converse look for it, and
  // without it ask for a number above max_items_node).
  'config-node-max',
  'create-and-configure',
  'create-nodes',
  'delete-items',
  'delete-nodes',
  'filtered-notifications',
  'item-ids',
  'last-published',
  'persistent-items',
  'publish',
  'publish-options',
  'purge-nodes',
  'retract-items',
  'retrieve-items',
].map((feature) => `${NS_PUBSUB}#${feature}`);

/** The pubsub#… features of the pubsub service (XEP-0060 §10). */
export const SERVICE_FEATURES = [
  'access-open',
  'access-presence',
  'access-roster',
  'access-whitelist',
  'auto-create',
  'config-node',
  'config-node-max',
  'create-and-configure',
  'create-nodes',
  'delete-items',
  'delete-nodes',
  'instant-nodes',
  'item-ids',
  'last-published',
  'manage-subscriptions',
  'modify-affiliations',
  'outcast-affiliation',
  'member-affiliation',
  'persistent-items',
  'publish',
  'publish-options',
  'publisher-affiliation',
  'purge-nodes',
  'retract-items',
  'retrieve-affiliations',
  'retrieve-items',
  'retrieve-subscriptions',
  'subscribe',
].map((feature) => `${NS_PUBSUB}#${feature}`);
