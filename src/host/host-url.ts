/** The URL a client on this machine uses to reach a host listening on `host:port`. */
export function hostUrl(host: string, port: number, tls: boolean): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const bracketed = reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable;
  return `${tls ? 'https' : 'http'}://${bracketed}:${port}`;
}
