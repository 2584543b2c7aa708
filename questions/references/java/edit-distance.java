class Solution {
    long editDistance(String source, String target) {
        int[] a = source.codePoints().toArray();
        int[] b = target.codePoints().toArray();
        int[] previous = new int[b.length + 1];
        for (int j = 0; j <= b.length; j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length; i++) {
            int[] current = new int[b.length + 1];
            current[0] = i;
            for (int j = 1; j <= b.length; j++) {
                int substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
                current[j] = Math.min(Math.min(previous[j] + 1, current[j - 1] + 1), substitute);
            }
            previous = current;
        }
        return previous[b.length];
    }
}
