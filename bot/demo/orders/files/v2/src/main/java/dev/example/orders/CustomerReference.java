package dev.example.orders;

/**
 * Referencia opcional que el cliente asocia a un pedido.
 *
 * <p>Se guarda normalizada, sin espacios al principio ni al final. Ver
 * docs/components.md.
 */
public record CustomerReference(String value) {

    public static final int MAX_LENGTH = 64;

    public CustomerReference {
        value = value.strip();
        if (value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(
                    "customerReference must be at most " + MAX_LENGTH + " characters");
        }
    }
}
