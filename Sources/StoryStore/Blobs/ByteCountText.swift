/// Byte counts as people read them: exact binary units for limits set in
/// them ("1 GiB", "256 KiB"), one decimal in SI units otherwise ("2.1 GB").
enum ByteCountText {
    /// The count in words ("2.1 GB", "1 GiB", "12 bytes").
    static func text(_ bytes: UInt64) -> String {
        let binary: [(UInt64, String)] = [(1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (unit, name) in binary where bytes >= unit && bytes % unit == 0 {
            return "\(bytes / unit) \(name)"
        }
        let decimal: [(Double, String)] = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")]
        for (unit, name) in decimal where Double(bytes) >= unit {
            let value = (Double(bytes) / unit * 10).rounded() / 10
            let whole = value == value.rounded()
            return whole ? "\(Int(value)) \(name)" : "\(value) \(name)"
        }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }
}
