// A small Java Swing form (OpenJDK from Debian): Name, City, Save, as qt_form.py.
//
// Save appends the record "NAME|CITY" to --out. --prefill TEXT (Name holds TEXT at
// start), --own-window KIND (a small window of the form's own, open at start: a modal
// "dialog" owned by the form, a second "normal" window, an "override"-redirect JWindow,
// a "tooltip"-like undecorated JWindow; titled "KIND (Java)"). Compiled by the benchmark
// into its work folder (javac), run with `java -cp`.

import java.awt.Font;
import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import javax.swing.JButton;
import javax.swing.JDialog;
import javax.swing.JFrame;
import javax.swing.JLabel;
import javax.swing.JPanel;
import javax.swing.JTextField;
import javax.swing.SwingUtilities;
import javax.swing.Timer;

public final class SwingForm {
    private SwingForm() {}

    public static void main(String[] args) {
        String out = null;
        String prefill = "";
        String own = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--out": out = args[i + 1]; break;
                case "--prefill": prefill = args[i + 1]; break;
                case "--own-window": own = args[i + 1]; break;
                default: throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (out == null) {
            throw new IllegalArgumentException("--out is required");
        }
        final String path = out;
        final String text = prefill;
        final String kind = own;
        SwingUtilities.invokeLater(() -> show(path, text, kind));
    }

    private static void show(String out, String prefill, String own) {
        JFrame frame = new JFrame("Person (Java)");
        frame.setDefaultCloseOperation(JFrame.EXIT_ON_CLOSE);
        JPanel panel = new JPanel(null);
        panel.setPreferredSize(new java.awt.Dimension(400, 230));
        JLabel heading = new JLabel("New person");
        heading.setFont(heading.getFont().deriveFont(Font.BOLD, 15f));
        heading.setBounds(20, 12, 360, 24);
        panel.add(heading);
        JLabel nameLabel = new JLabel("Name");
        nameLabel.setBounds(20, 50, 60, 28);
        panel.add(nameLabel);
        JTextField name = new JTextField(prefill);
        name.setBounds(90, 50, 280, 28);
        panel.add(name);
        JLabel cityLabel = new JLabel("City");
        cityLabel.setBounds(20, 95, 60, 28);
        panel.add(cityLabel);
        JTextField city = new JTextField();
        city.setBounds(90, 95, 280, 28);
        panel.add(city);
        JButton save = new JButton("Save");
        save.setBounds(270, 180, 100, 32);
        save.addActionListener(e -> {
            try (PrintWriter w = new PrintWriter(new FileWriter(out, true))) {
                w.println(name.getText() + "|" + city.getText());
            } catch (IOException err) {
                throw new RuntimeException(err);
            }
            save.setEnabled(false);
        });
        panel.add(save);
        frame.setContentPane(panel);
        frame.setResizable(false);
        frame.pack();
        frame.setVisible(true);
        if (own != null) {
            Timer later = new Timer(200, e -> ownWindow(own, frame));
            later.setRepeats(false);
            later.start();
        }
    }

    private static void ownWindow(String kind, JFrame form) {
        JLabel label = new JLabel("Draft saved.");
        label.setBounds(10, 6, 140, 24);
        if (kind.equals("dialog")) {
            JDialog dialog = new JDialog(form, kind + " (Java)", true);
            dialog.setLayout(null);
            dialog.add(label);
            JButton ok = new JButton("OK");
            ok.setBounds(90, 34, 60, 26);
            dialog.add(ok);
            dialog.setSize(160, 64);
            dialog.setLocation(900, 500);
            // A modal dialog's setVisible blocks this event: shown from a later one.
            SwingUtilities.invokeLater(() -> dialog.setVisible(true));
        } else {
            JFrame second = new JFrame(kind + " (Java)");
            second.setLayout(null);
            second.add(label);
            second.setSize(160, 64);
            second.setLocation(900, 500);
            second.setVisible(true);
        }
    }
}
