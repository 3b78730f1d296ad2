/**
 * mod_muc_admin: the administration commands of multi-user chat (ejabberd's mod_muc_admin): rooms and
 * their options, affiliations, occupants and history, MUC/Sub subscriptions, registered nicks, listings
 * and clean-up across services, and rooms in bulk from files. Every command acts through mod_muc's
 * service (which must be enabled: this module consumes it), on the rooms' live and stored state. Each
 * area lives in its own folder; this file only puts them together.
 */
import { defineModule, type HandlersFor } from '@service/plugin-api';
import { mucService } from '@service/mod_muc/api';
import { affiliationCommands, affiliationHandlers } from './affiliations/index.js';
import type { MucAdminContext } from './context.js';
import { fileCommands, fileHandlers } from './files/index.js';
import { listingCommands, listingHandlers } from './listing/index.js';
import { nickCommands, nickHandlers } from './nicks/index.js';
import { occupantCommands, occupantHandlers } from './occupants/index.js';
import { roomCommands, roomHandlers } from './rooms/index.js';
import { subscriptionCommands, subscriptionHandlers } from './subscriptions/index.js';

const commands = [...roomCommands, ...affiliationCommands, ...occupantCommands, ...subscriptionCommands, ...nickCommands, ...listingCommands, ...fileCommands] as const;

export default defineModule({
  name: 'mod_muc_admin',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'Multi-user chat administration commands: rooms, options, affiliations, occupants, subscriptions, nicks',
  doc:
    'The administration commands of multi-user chat, through mod_muc (which must be enabled too): create and destroy rooms (one by one or from a file), ' +
    'read and change their options and affiliations, list occupants, history and MUC/Sub subscribers, subscribe accounts, register nicks, ' +
    'and find or clean up empty and unused rooms on one MUC service or all of them (`global`).',
  consumes: [mucService],
  options: {
    subscribe_room_many_max_users: {
      type: 'integer',
      default: 50,
      min: 1,
      doc: 'The most users one subscribe_room_many call may subscribe; a call with more fails, subscribing nobody.',
    },
  },
  commands,
  start(ctx) {
    const admin: MucAdminContext = {
      muc: () => ctx.use(mucService),
      options: { subscribe_room_many_max_users: ctx.options.subscribe_room_many_max_users },
      services: ctx.services,
    };
    const handlers = {
      ...roomHandlers(admin),
      ...affiliationHandlers(admin),
      ...occupantHandlers(admin),
      ...subscriptionHandlers(admin),
      ...nickHandlers(admin),
      ...listingHandlers(admin),
      ...fileHandlers(admin),
    } as HandlersFor<typeof commands>;
    return { handlers };
  },
});
