/**
 * The kernel's own commands, in one list: the server registers them with their handlers, and servicectl
 * reads the declarations statically (which commands can run with the server stopped) without booting.
 */
import type { CommandDecl, CommandHandler } from '@service/plugin-api';
import type { LogService } from '../log/log-service.js';
import type { KernelServices } from '../modules/services.js';
import { accountCommands, accountHandlers } from './accounts.js';
import { consoleCommands, consoleHandlers } from './console.js';
import { documentationCommands, documentationHandlers } from './documentation.js';
import { logCommands, logHandlers } from './logs.js';
import { moduleCommands, moduleHandlers } from './modules.js';
import { serverCommands, serverHandlers } from './server.js';
import { sessionCommands, sessionHandlers } from './sessions.js';
import { oauthCommands, oauthHandlers } from './oauth.js';
import { embeddedCommands, embeddedHandlers } from './data-embedded.js';
import { piefxisCommands, piefxisHandlers } from './data-piefxis.js';
import { importsCommands, importsHandlers } from './data-imports.js';
import { sqlDataCommands, sqlDataHandlers } from './data-sql.js';

export const KERNEL_COMMANDS: readonly CommandDecl[] = [
  ...accountCommands,
  ...serverCommands,
  ...sessionCommands,
  ...oauthCommands,
  ...documentationCommands,
  ...moduleCommands,
  ...logCommands,
  ...consoleCommands,
  ...embeddedCommands,
  ...piefxisCommands,
  ...importsCommands,
  ...sqlDataCommands,
];

/** Every kernel command declaration with its handler (per version where a command has several). */
export function kernelCommandHandlers(services: KernelServices, logs: () => LogService): Array<[CommandDecl, CommandHandler<CommandDecl>]> {
  const handlers = {
    ...accountHandlers(services),
    ...serverHandlers(services),
    ...sessionHandlers(services),
    ...oauthHandlers(services, () => services.oauth),
    ...documentationHandlers(services),
    ...moduleHandlers(services),
    ...logHandlers(logs, services.workers),
    ...consoleHandlers(services),
    ...embeddedHandlers(services),
    ...piefxisHandlers(services),
    ...importsHandlers(services),
    ...sqlDataHandlers(services),
  } as Record<string, CommandHandler<CommandDecl>>;
  return KERNEL_COMMANDS.map((decl) => [decl, handlers[`${decl.name}@v${decl.version ?? 0}`] ?? handlers[decl.name]!]);
}
