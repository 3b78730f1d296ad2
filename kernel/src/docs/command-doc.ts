/**
 * What documentation is generated from: every known command's declaration with the module that provides
 * it and whether it is loaded now. Loaded commands come from the registry (all their versions), the others
 * from the static declarations of modules that are available but not enabled.
 */
import type { CommandDecl } from '../commands/types.js';

export interface CommandDoc {
  /** The latest definition. */
  readonly decl: CommandDecl;
  /** Older definitions still selectable with /api/vN, oldest first (empty for most commands). */
  readonly older: readonly CommandDecl[];
  /** `kernel`, or the module's name. */
  readonly module: string;
  /** Registered in the running server (false: its module is available but not enabled). */
  readonly loaded: boolean;
}
