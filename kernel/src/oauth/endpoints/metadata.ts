/**
 * The authorization server metadata (RFC 8414), served at `<mount>/.well-known/oauth-authorization-server`
 * (and, for OpenID-minded clients, `…/openid-configuration`). It lists every flow this server offers,
 * ejabberd's implicit and password grants included, and only those.
 */
export function authorizationServerMetadata(issuer: string, scopes: readonly string[]): Record<string, unknown> {
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    authorization_endpoint: at('/authorize'),
    token_endpoint: at('/token'),
    revocation_endpoint: at('/revoke'),
    introspection_endpoint: at('/introspect'),
    jwks_uri: at('/jwks'),
    scopes_supported: scopes,
    // RFC 8414 describes these for authorization_endpoint, which is oidc-provider's: the code flow, its
    // answer in the query, the fragment or an auto-submitted form. ejabberd's implicit grant (token in the
    // query) is at x-implicit_authorization_endpoint, and listed among grant_types_supported.
    response_types_supported: ['code'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', 'password', 'implicit'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    // ejabberd's endpoint for the implicit grant, named as the spec names it.
    'x-implicit_authorization_endpoint': at('/authorization_token'),
  };
}
