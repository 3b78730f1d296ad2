/**
 * service_xmlrpc: the command API over XML-RPC, with ejabberd_xmlrpc's two call forms (frontend.ts) and its
 * wire format (codec.ts). A listener kind of its own (`module: service_xmlrpc` in `listen:`, every path of the
 * port), and a request handler of the same name for mounting it on a service_http listener. Named like the
 * listener it replaces, so an ejabberd configuration needs only ejabberd_ changed to service_; a listener of
 * this kind enables the module without listing it in `modules:`.
 */
import { defineModule } from '@service/plugin-api';
import { createXmlRpcHandler } from './frontend.js';

export default defineModule({
  name: 'service_xmlrpc',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'XML-RPC frontend of the command API (ejabberd_xmlrpc)',
  doc: 'Serves every command over XML-RPC. Open a port with a `listen:` entry of `module: service_xmlrpc`, or mount the handler on a service_http listener with `request_handlers: {/xmlrpc: service_xmlrpc}`. api_permissions name its callers `from: service_xmlrpc`.',
  frontends: ['service_xmlrpc'],
  listeners: {
    service_xmlrpc: {
      doc: 'XML-RPC on its own port: every path is the XML-RPC endpoint, as ejabberd_xmlrpc mounted at /.',
      options: {
        max_body_size: { type: 'integer', min: 1, default: 1048576, doc: 'Largest accepted request body, in bytes.' },
        request_timeout: {
          type: 'integer',
          min: 1,
          max: 3600,
          default: 30,
          doc: 'Seconds a client has to send a whole request, headers and body; then the connection is closed with 408.',
        },
      },
    },
  },
  start(ctx) {
    const handler = createXmlRpcHandler(ctx.services);
    return {
      httpHandlers: { service_xmlrpc: handler },
      listeners: {
        service_xmlrpc: (config) =>
          ctx.services.httpServer.serve(
            { ...config, max_body_size: config.max_body_size as number, request_timeout: config.request_timeout as number },
            handler,
          ),
      },
    };
  },
});
