/** Sign-in: the token is checked against an operator endpoint before it is kept. */
import { useState } from 'preact/hooks';
import { describeFailure } from '../format.js';
import { openSession } from '../session.js';

export function SignIn({ notice, onSignIn }: { notice: string | undefined; onSignIn: (token: string) => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | undefined>(notice);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const token = value.trim();
    if (!token) return;
    setBusy(true);
    try {
      await openSession(token).operator.runs({ finished: 0 });
      onSignIn(token);
    } catch (failure) {
      setError(describeFailure(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>agenticdriver console</h1>
      <form onSubmit={submit}>
        <label for="token">Operator token</label>
        <input id="token" name="token" type="password" autocomplete="off" value={value} onInput={(event) => setValue((event.target as HTMLInputElement).value)} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      {error && (
        <p class="error" role="alert" data-testid="signin-error">
          {error}
        </p>
      )}
      <p class="hint">The token stays in this tab's session storage and is sent only to this host.</p>
    </main>
  );
}
