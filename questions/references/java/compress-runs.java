class Solution {
    String compressRuns(String text) {
        int[] chars = text.codePoints().toArray();
        StringBuilder out = new StringBuilder();
        int start = 0;
        for (int index = 1; index <= chars.length; index++) {
            if (index == chars.length || chars[index] != chars[start]) {
                int length = index - start;
                out.appendCodePoint(chars[start]);
                if (length > 1) {
                    out.append(length);
                }
                start = index;
            }
        }
        return out.toString();
    }
}
