/** Whether a repository path is a test file (or a test folder's file), by the common layouts of Python, JS, Java, Kotlin and C#. */
const TEST_PATH =
  /(^|\/)(tests?|testing|__tests__|spec|specs)(\/|$)|(^|\/)test_[^/]*$|_tests?\.\w+$|\.(test|spec)\.\w+$|Tests?\.(java|kt|cs)$|(^|\/)conftest\.py$/i;

export function isTestPath(path: string): boolean {
  return TEST_PATH.test(path);
}
