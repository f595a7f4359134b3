/** Providers: each provider this token may use, with its health and model catalog; Refresh forces a new discovery probe. */
import { useEffect, useState } from 'preact/hooks';
import type { Provider } from '../../../src/client/index.js';
import { ErrorLine, Scroll } from '../components.js';
import { time } from '../format.js';
import type { ViewProps } from './shell.js';

export function Providers({ session, fail }: ViewProps) {
  const [providers, setProviders] = useState<Provider[]>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const load = async (refresh: boolean) => {
    setBusy(true);
    try {
      setProviders(await session.host.providers({ refresh }));
      setError(undefined);
    } catch (failure) {
      setError(failure);
      fail(failure);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(false), []);
  return (
    <section>
      <h2>
        Providers{' '}
        <button onClick={() => load(true)} disabled={busy}>
          Refresh
        </button>
      </h2>
      <ErrorLine error={error} />
      {providers && providers.length === 0 && <p>This token is granted no provider.</p>}
      <Scroll>
        <table>
          <thead>
            <tr>
              <th>Provider</th>
              <th>Vendor</th>
              <th>Auth</th>
              <th>Health</th>
              <th>Models</th>
            </tr>
          </thead>
          <tbody>
            {(providers ?? []).map((provider) => (
              <tr key={provider.id} data-provider={provider.id}>
                <td>{provider.id}</td>
                <td>{provider.vendor}</td>
                <td>{provider.authMode}</td>
                <td>
                  <span class={`badge ${provider.health?.status ?? 'unknown'}`}>{provider.health?.status ?? 'unknown'}</span> {provider.health?.message ?? ''}
                  {provider.health?.checkedAt && (
                    <div class="muted">
                      {provider.health.code} · checked {time(provider.health.checkedAt)}
                    </div>
                  )}
                </td>
                <td>
                  {(provider.modelCatalog?.models ?? provider.models ?? []).join(', ')}
                  {provider.modelCatalog && <div class="muted">catalog: {provider.modelCatalog.source}</div>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Scroll>
    </section>
  );
}
