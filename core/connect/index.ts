// core/connect: reaching a pod (docs/connect.md): its HTTP ports on the proxy domain, who may open
// them (keys, signed links, their cookies), and the account's SSH keys.
export { parseProxyHost, proxyDomainProblem, type ProxySettings, registrableDomain, underProxyDomain } from './proxy-domain.ts';
export { cookieValue, isGpufleetCookie, type KeyPrincipals, linkPath, PORT_COOKIE_TTL_S, PORT_LINK_PARAM, PORT_LINK_KEY_PURPOSE, PORT_LINK_TTL_S, PortAccess } from './port-access.ts';
export { PortTokens, type PortTokenClaims, type PortTokenKind } from './port-tokens.ts';
export { AccountSshKeys, checkPubKey, pubKeyFromList, sshKeyList } from './ssh-keys.ts';
