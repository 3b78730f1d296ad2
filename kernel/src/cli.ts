/**
 * What servicectl needs on every call, as `@service/kernel/cli`: the configuration's location, the control
 * socket's protocol, the output formats, the help's rendering and the error table. The kernel's index loads the
 * whole server (koa, knex, oidc-provider, every module's declarations: half a second and 45 MB more before the
 * first byte reaches the control socket); servicectl imports it only where it runs the server itself (foreground,
 * a command offline) or reads the modules' declarations without a running server (help).
 */
export { KERNEL_VERSION } from './version.js';
export { locateConfig, type ConfigLocation } from './config/locate.js';
export { CONTROL_SOCKET, type ControlFrame, type ControlRequest, type PongFrame } from './ctl/protocol.js';
export { formatCliOutput } from './ctl/output.js';
export { renderOverview, renderHelpTopic } from './docs/help-text.js';
export { ERROR_KINDS, type CommandDoc, type ErrorKind, type ResultType } from '@service/plugin-api';
